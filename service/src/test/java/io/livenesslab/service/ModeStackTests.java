package io.livenesslab.service;

import java.net.URI;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.diagnostics.FailureAnalyzedException;
import org.springframework.boot.reactor.netty.NettyWebServer;
import org.springframework.boot.tomcat.TomcatWebServer;
import org.springframework.boot.web.server.WebServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Both stacks are in the jar and the mode chooses one ({@link ModeStack}): every mode, with and without a
 * management port, starts the web servers of its stack (Reactor Netty for the WebFlux modes, Tomcat for
 * the servlet modes, the management server too) and serves {@code /api/work} from its own endpoint; a
 * setting that only the other stack has, or one that contradicts the mode, stops start-up naming it.
 */
class ModeStackTests {

	static Stream<Arguments> everyModeWithAndWithoutAManagementPort() {
		return Arrays.stream(Mode.values()).flatMap((mode) -> Stream.of(Arguments.of(mode, false), Arguments.of(mode, true)));
	}

	@ParameterizedTest(name = "{0}, management port {1}")
	@MethodSource("everyModeWithAndWithoutAManagementPort")
	void eachModeStartsTheServersOfItsStack(Mode mode, boolean managementPort) throws Exception {
		Map<String, Object> properties = new HashMap<>(Map.of("demo.mode", mode.label()));
		if (managementPort) {
			properties.put("management.server.port", 0);
		}
		Class<? extends WebServer> server = (mode.stack() == Mode.Stack.SERVLET) ? TomcatWebServer.class
				: NettyWebServer.class;
		try (RunningService service = RunningService.start(properties)) {
			assertThat(service.webServers()).as("the web servers that started")
				.containsOnlyKeys(managementPort ? new String[] { "main", "management" } : new String[] { "main" })
				.allSatisfy((namespace, started) -> assertThat(started).isInstanceOf(server));
			assertThat(RunningService.get(service.uri("/api/work?latencyMs=1")).body())
				.contains("\"mode\":\"" + mode.label() + "\"");
			URI liveness = managementPort ? service.managementUri("/actuator/health/liveness")
					: service.uri("/actuator/health/liveness");
			assertThat(RunningService.get(liveness).statusCode()).isEqualTo(200);
			assertThat(RunningService.get(service.uri("/livez")).statusCode()).isEqualTo(200);
		}
	}

	@ParameterizedTest(name = "{0}=true in mode {1} stops start-up")
	@CsvSource({ "demo.liveness-off-pool, servlet, DEMO_LIVENESS_OFF_POOL",
			"demo.management-own-event-loops, servlet-async, DEMO_MANAGEMENT_OWN_EVENT_LOOPS",
			"demo.netty-metrics, servlet-virtual, DEMO_NETTY_METRICS" })
	void aWebFluxOnlySettingStopsAServletMode(String setting, String mode, String environment) {
		assertThatThrownBy(() -> RunningService.start(Map.of("demo.mode", mode, setting, true)))
			.isInstanceOf(FailureAnalyzedException.class)
			.hasMessageContaining(setting + "=true (" + environment + ") does not apply to mode " + mode + ": ");
	}

	/** Without the refusal the servlet modes would start and answer every request at once, the delay ignored. */
	@ParameterizedTest(name = "demo.api-delay in mode {0} stops start-up")
	@CsvSource({ "servlet", "servlet-async", "servlet-virtual" })
	void theSlowApiStopsAServletMode(String mode) {
		assertThatThrownBy(() -> RunningService.start(Map.of("demo.mode", mode, "demo.api-delay", "3s")))
			.isInstanceOf(FailureAnalyzedException.class)
			.hasMessageContaining("demo.api-delay=3s (DEMO_API_DELAY) does not apply to mode " + mode + ": ");
	}

	/**
	 * A warm-up on the event loops (the default place) has no event loops to block on Tomcat: refused, naming
	 * both settings; before readiness ({@code startup}) it runs on either stack (WarmUpTests).
	 */
	@ParameterizedTest(name = "demo.warm-up=4s, demo.warm-up-on={1}, in mode {0} stops start-up")
	@CsvSource({ "servlet, ''", "servlet-async, event-loop", "servlet-virtual, ''" })
	void aWarmUpOnTheEventLoopsStopsAServletMode(String mode, String on) {
		Map<String, Object> properties = new HashMap<>(Map.of("demo.mode", mode, "demo.warm-up", "4s"));
		if (!on.isEmpty()) {
			properties.put("demo.warm-up-on", on);
		}
		assertThatThrownBy(() -> RunningService.start(properties))
			.isInstanceOf(FailureAnalyzedException.class)
			.hasMessageContaining("demo.warm-up=4s (DEMO_WARM_UP) on the event loops (demo.warm-up-on=event-loop, DEMO_WARM_UP_ON"
					+ (on.isEmpty() ? ", the default" : "") + ") does not apply to mode " + mode + ": ");
	}

	@ParameterizedTest(name = "{0} with spring.threads.virtual.enabled={1} stops start-up")
	@CsvSource({ "servlet, true", "servlet-virtual, false" })
	void virtualThreadsThatContradictTheModeStopStartUp(String mode, boolean virtual) {
		assertThatThrownBy(() -> RunningService.start(Map.of("demo.mode", mode, "spring.threads.virtual.enabled", virtual)))
			.isInstanceOf(FailureAnalyzedException.class)
			.hasMessageContaining("spring.threads.virtual.enabled=" + virtual + " contradicts mode " + mode);
	}

	@ParameterizedTest(name = "{0} with spring.main.web-application-type={1} stops start-up")
	@CsvSource({ "reactive, servlet", "servlet, reactive" })
	void aWebApplicationTypeThatContradictsTheModeStopsStartUp(String mode, String type) {
		assertThatThrownBy(() -> RunningService.start(Map.of("demo.mode", mode, "spring.main.web-application-type", type)))
			.isInstanceOf(FailureAnalyzedException.class)
			.hasMessageContaining("spring.main.web-application-type=" + type + " contradicts mode " + mode);
	}

	/** The WebFlux modes' exclusions are added to a user's own list, not replaced by it. */
	@Test
	void aUsersOwnExclusionsKeepTomcatOutOfAWebFluxMode() throws Exception {
		try (RunningService service = RunningService.start(Map.of("demo.mode", "reactive", "management.server.port", 0,
				"spring.autoconfigure.exclude",
				"org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration"))) {
			assertThat(service.webServers().values()).allSatisfy((started) -> assertThat(started).isInstanceOf(NettyWebServer.class));
		}
	}

	@Test
	void servletVirtualServesOnVirtualThreadsAndServletOnTomcatsPool() throws Exception {
		try (RunningService service = RunningService.start(Map.of("demo.mode", "servlet-virtual"))) {
			assertThat(RunningService.get(service.uri("/api/work?latencyMs=1")).body()).contains("\"thread\":\"tomcat-handler-");
		}
		try (RunningService service = RunningService.start(Map.of("demo.mode", "servlet"))) {
			assertThat(RunningService.get(service.uri("/api/work?latencyMs=1")).body()).contains("\"thread\":\"http-nio-");
		}
	}

}
