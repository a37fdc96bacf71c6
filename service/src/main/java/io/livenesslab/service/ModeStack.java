package io.livenesslab.service;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.diagnostics.FailureAnalyzedException;
import org.springframework.boot.env.DefaultPropertiesPropertySource;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Chooses the web stack from the mode before the application context is made: WebFlux on Reactor Netty
 * for blocking, reactive, offloaded and virtual, Spring MVC on Tomcat for servlet, servlet-async and
 * servlet-virtual. Both stacks are in the jar, and Boot alone would choose Spring MVC for every mode. The
 * settings each mode needs are set here and nowhere else, so a deployment sets {@code APP_MODE} and nothing
 * more:
 * <ul>
 * <li>{@code spring.main.web-application-type}, a default property: {@code reactive} or {@code servlet};
 * <li>{@code spring.threads.virtual.enabled}, a default property: {@code true} for servlet-virtual
 * (Tomcat then serves every request on a virtual thread), {@code false} for the other servlet modes; the
 * WebFlux modes leave it alone;
 * <li>{@code spring.autoconfigure.exclude} in the WebFlux modes, added to any the user gives: Tomcat's
 * reactive web server and its management context, which Boot would otherwise set up beside Reactor
 * Netty's (a management port then fails on two {@code reactiveWebChildContextFactory} beans), and
 * Tomcat's meters.
 * </ul>
 * A setting that contradicts the mode, or one that only the other stack has, stops start-up with a message
 * that names it, rather than quietly running something other than what the mode says.
 */
final class ModeStack implements EnvironmentPostProcessor {

	/** What the WebFlux modes leave out of Boot's auto-configuration: Tomcat is in the jar for the servlet modes. */
	static final List<String> TOMCAT_AUTO_CONFIGURATIONS = List.of(
			"org.springframework.boot.tomcat.autoconfigure.reactive.TomcatReactiveWebServerAutoConfiguration",
			"org.springframework.boot.tomcat.autoconfigure.actuate.web.server.TomcatReactiveManagementContextAutoConfiguration",
			"org.springframework.boot.tomcat.autoconfigure.metrics.TomcatMetricsAutoConfiguration");

	/** The WebFlux-only settings, each with why it has no meaning on Tomcat. */
	private static final Map<String, String> WEBFLUX_ONLY = Map.of(
			"demo.liveness-off-pool",
			"it answers WebFlux's liveness check on the event loop instead of boundedElastic; on Spring MVC "
					+ "the check already runs on the Tomcat thread that serves the probe, and there is no other pool",
			"demo.management-own-event-loops",
			"it gives WebFlux's management server event loops of its own; on Tomcat the management server "
					+ "(MANAGEMENT_SERVER_PORT) has a connector and threads of its own already",
			"demo.netty-metrics",
			"it turns on Reactor Netty's server metrics, and the servlet modes serve on Tomcat "
					+ "(its thread pool's meters are tomcat_threads_*)");

	/** WebFlux only too, and a duration: the downstream's slow API (ApiDelay). */
	private static final String API_DELAY = "demo.api-delay";

	/** WebFlux only when it runs on the event loops, the default place ({@link WarmUp}). */
	private static final String WARM_UP = "demo.warm-up";

	private static final String WARM_UP_ON = "demo.warm-up-on";

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		Binder binder = Binder.get(environment);
		Mode mode;
		try {
			mode = Mode.parse(binder.bind("demo.mode", String.class).orElse(Mode.DEFAULT));
		}
		catch (IllegalArgumentException ex) {
			// DemoProperties refuses it, with the valid modes, when the context binds it.
			return;
		}
		Map<String, Object> defaults = new LinkedHashMap<>();
		if (mode.stack() == Mode.Stack.SERVLET) {
			defaults.put("spring.main.web-application-type", WebApplicationType.SERVLET.name());
			defaults.put("spring.threads.virtual.enabled", mode == Mode.SERVLET_VIRTUAL);
			WEBFLUX_ONLY.forEach((property, why) -> {
				if (binder.bind(property, Boolean.class).orElse(false)) {
					throw new FailureAnalyzedException(property + "=true (" + environmentName(property)
							+ ") does not apply to mode " + mode.label() + ": " + why,
							"Unset " + environmentName(property) + ", or choose a WebFlux mode: " + webFluxModes() + ".");
				}
			});
			binder.bind(API_DELAY, String.class).ifBound((delay) -> {
				throw new FailureAnalyzedException(API_DELAY + "=" + delay + " (" + environmentName(API_DELAY)
						+ ") does not apply to mode " + mode.label()
						+ ": the delay is a WebFlux filter (ApiDelay), and on Tomcat every request would be served at once",
						"Unset " + environmentName(API_DELAY) + ", or choose a WebFlux mode: " + webFluxModes() + ".");
			});
			refuseAWarmUpOnTheEventLoops(binder, mode);
		}
		else {
			defaults.put("spring.main.web-application-type", WebApplicationType.REACTIVE.name());
			// Not a default a user's own list may replace: added to it, ahead of every other source.
			List<String> excluded = new ArrayList<>(
					binder.bind("spring.autoconfigure.exclude", Bindable.listOf(String.class)).orElse(List.of()));
			excluded.addAll(TOMCAT_AUTO_CONFIGURATIONS);
			environment.getPropertySources()
				.addFirst(new MapPropertySource("demoModeStack",
						Map.of("spring.autoconfigure.exclude", String.join(",", excluded))));
		}
		DefaultPropertiesPropertySource.addOrMerge(defaults, environment.getPropertySources());
		checkWhatWasSetAgrees(Binder.get(environment), mode);
	}

	/** A user's own value wins over a default: refuse one that would make the mode's name a lie. */
	private static void checkWhatWasSetAgrees(Binder binder, Mode mode) {
		WebApplicationType type = binder.bind("spring.main.web-application-type", WebApplicationType.class).get();
		WebApplicationType wanted = (mode.stack() == Mode.Stack.SERVLET) ? WebApplicationType.SERVLET
				: WebApplicationType.REACTIVE;
		// NONE (no web server at all) is a test's choice, not a contradiction.
		if (type != wanted && type != WebApplicationType.NONE) {
			throw new FailureAnalyzedException("spring.main.web-application-type=" + type.name().toLowerCase(Locale.ROOT)
					+ " contradicts mode " + mode.label() + ", which runs on " + stackName(mode) + ".",
					"Leave spring.main.web-application-type unset: the mode (APP_MODE) chooses the stack.");
		}
		if (mode.stack() == Mode.Stack.SERVLET) {
			boolean virtual = binder.bind("spring.threads.virtual.enabled", Boolean.class).get();
			if (virtual != (mode == Mode.SERVLET_VIRTUAL) && mode != Mode.SERVLET_ASYNC) {
				throw new FailureAnalyzedException("spring.threads.virtual.enabled=" + virtual + " contradicts mode "
						+ mode.label() + ": servlet serves on Tomcat's platform threads, servlet-virtual on virtual threads.",
						"Leave spring.threads.virtual.enabled unset and choose the mode (APP_MODE): servlet or servlet-virtual.");
			}
		}
	}

	/**
	 * A warm-up on the event loops blocks Reactor Netty's loops; Tomcat has none, and the same code on Spring
	 * MVC would run on the main thread, leaving the probes answered ({@link WarmUp}). A bad value is left to
	 * DemoProperties, which names it when the context binds it.
	 */
	private static void refuseAWarmUpOnTheEventLoops(Binder binder, Mode mode) {
		Duration warmUp;
		String where = binder.bind(WARM_UP_ON, String.class).orElse(null);
		WarmUp.On on;
		try {
			warmUp = binder.bind(WARM_UP, Duration.class).orElse(Duration.ZERO);
			on = WarmUp.On.parse((where != null) ? where : WarmUp.On.DEFAULT);
		}
		catch (RuntimeException ex) {
			return;
		}
		if (warmUp.isPositive() && on == WarmUp.On.EVENT_LOOP) {
			throw new FailureAnalyzedException(WARM_UP + "=" + binder.bind(WARM_UP, String.class).get() + " ("
					+ environmentName(WARM_UP) + ") on the event loops (" + WARM_UP_ON + "=" + on.label() + ", "
					+ environmentName(WARM_UP_ON) + ((where != null) ? "" : ", the default")
					+ ") does not apply to mode " + mode.label()
					+ ": it blocks Reactor Netty's event loops, and the servlet modes serve on Tomcat, which has none",
					"Set " + environmentName(WARM_UP_ON) + "=startup (the warm-up before readiness, on either stack), "
							+ "unset " + environmentName(WARM_UP) + ", or choose a WebFlux mode: " + webFluxModes() + ".");
		}
	}

	private static String webFluxModes() {
		return Arrays.stream(Mode.values())
			.filter((each) -> each.stack() == Mode.Stack.WEBFLUX)
			.map(Mode::label)
			.collect(Collectors.joining(", "));
	}

	private static String stackName(Mode mode) {
		return (mode.stack() == Mode.Stack.SERVLET) ? "Spring MVC on Tomcat" : "WebFlux on Reactor Netty";
	}

	/** DEMO_LIVENESS_OFF_POOL for demo.liveness-off-pool: how the chart and the docs name a setting. */
	private static String environmentName(String property) {
		return property.replace('.', '_').replace('-', '_').toUpperCase(Locale.ROOT);
	}

}
