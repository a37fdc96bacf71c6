package io.livenesslab.service;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import io.netty.util.concurrent.EventExecutor;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.netty.resources.LoopResources;

import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;

/**
 * {@code demo.warm-up} (DEMO_WARM_UP, a duration; 0s, the default, is none) and {@code demo.warm-up-on}
 * (DEMO_WARM_UP_ON): work the service does once, after its context has started and before it is of use, a
 * cache loaded from its database, and where it does it (rwlove/home-ops#13395: a startup probe passed on
 * the open port, the cache load that followed kept the event loop busy, and liveness, 5 s x 3, killed the
 * container three times in two minutes). Both forms sleep for the duration: a cache load waits on its
 * source more than it computes, and a sleep fails a probe as surely as a loop that computes, without
 * taking the node's CPU from the pods beside it ({@code demo.cpu-ms} is the setting that computes).
 *
 * <p>Where each form runs follows from the order in which Spring Boot 4.1.2 starts an application
 * ({@code SpringApplication.run}, with {@code EventPublishingRunListener} as the run listener):
 * <ol>
 * <li>{@code refreshContext}: the web server starts listening at the end of the refresh. Until the first
 * availability event, {@code ApplicationAvailability} says {@code LivenessState.BROKEN} and
 * {@code ReadinessState.REFUSING_TRAFFIC} (its defaults), so {@code /livez} and {@code /readyz} answer 503;
 * <li>{@code listeners.started}: {@code ApplicationStartedEvent}, then {@code LivenessState.CORRECT}
 * ({@code /livez} 200);
 * <li>{@code callRunners}: every {@code ApplicationRunner} and {@code CommandLineRunner}, in order, on the
 * thread that called {@code run} (the main thread);
 * <li>{@code listeners.ready}: {@code ApplicationReadyEvent}, its listeners called on the same thread,
 * then {@code ReadinessState.ACCEPTING_TRAFFIC} ({@code /readyz} 200).
 * </ol>
 * So "ready" in the name of {@code ApplicationReadyEvent} comes a moment before readiness says so, and
 * anything a runner does happens with liveness CORRECT and readiness REFUSING_TRAFFIC (Boot's reference
 * documentation: an application is considered ready once its runners have been called; spring-boot#39739).
 *
 * <ul>
 * <li>{@code event-loop} (the default, so that {@code DEMO_WARM_UP} alone reproduces the storm): the
 * warm-up as people write it on WebFlux, its work on the event loops. An {@code ApplicationReadyEvent}
 * listener puts a task that sleeps for the warm-up on each event loop of the main server and returns;
 * Boot then publishes ACCEPTING_TRAFFIC at once, and for the warm-up's length the loops answer nothing,
 * {@code /livez} and {@code /readyz} included. A startup probe that already passed (a {@code tcpSocket}
 * one passes once the port is open: the kernel accepts connections whatever the loops do) has handed the
 * pod to liveness, whose probes time out. WebFlux only: on Spring MVC the same code would not block what
 * answers the probes. A listener or runner runs on the main thread, not on Tomcat's workers, so occupying
 * those would take a warm-up that sends the service its own requests: a failure invented for the demo, and
 * the servlet mode under load already shows probes waiting for a worker. A servlet mode with a warm-up on
 * the event loops refuses to start instead ({@link ModeStack}), naming the setting, which is simpler and
 * says what is true: there are no event loops to warm up on.
 * <li>{@code startup} (the remedy), on either stack: the same work in an {@code ApplicationRunner}, on the
 * main thread, no event loop, Tomcat worker or boundedElastic thread (where Boot runs the blocking health
 * indicators, liveness's among them: offloaded mode's lesson). Liveness stays CORRECT and answered;
 * readiness stays REFUSING_TRAFFIC until the runners return and Boot publishes ACCEPTING_TRAFFIC, so
 * {@code /readyz} says 503 for the warm-up's length and a startup probe pointed at it passes only after.
 * The runner publishes REFUSING_TRAFFIC as it starts, as Boot's documentation shows for application
 * availability: on Boot 4.1.2 that is the state already, and it keeps the warm-up right should anything
 * before it have said otherwise. It does not publish ACCEPTING_TRAFFIC when done: Boot does, after every
 * runner and {@code ApplicationReadyEvent}, and saying it here would say so ahead of them. Nor does it run
 * the work asynchronously (on boundedElastic, publishing ACCEPTING_TRAFFIC at the end): the runner would
 * return at once, and Boot's own ACCEPTING_TRAFFIC would open readiness in the middle of the warm-up, as it
 * would overwrite a REFUSING_TRAFFIC published from an {@code ApplicationReadyEvent} listener.
 * </ul>
 */
@Configuration(proxyBeanMethods = false)
class WarmUp {

	private static final Log logger = LogFactory.getLog(WarmUp.class);

	/** Where the warm-up runs. */
	enum On {

		/** On each event loop of the main server, once the application is ready: the storm. */
		EVENT_LOOP,

		/** In a runner, before readiness says ACCEPTING_TRAFFIC: the remedy. */
		STARTUP;

		/** The place when none is given: the storm, so that DEMO_WARM_UP alone reproduces it. */
		static final String DEFAULT = "event-loop";

		/** Parses a place case-insensitively, or fails with a message listing the valid ones. */
		static On parse(String name) {
			for (On on : values()) {
				if (on.label().equalsIgnoreCase(name == null ? "" : name.strip())) {
					return on;
				}
			}
			throw new IllegalArgumentException("unknown demo.warm-up-on (DEMO_WARM_UP_ON) '" + name
					+ "': valid values are " + Arrays.stream(values()).map(On::label).collect(Collectors.joining(", ")));
		}

		/** The name DEMO_WARM_UP_ON takes: the constant in lower case, '-' for '_' ({@code event-loop}). */
		String label() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

	}

	/** {@code startup}: the warm-up in a runner, between LivenessState.CORRECT and ReadinessState.ACCEPTING_TRAFFIC. */
	@Bean
	ApplicationRunner warmUpBeforeReadiness(DemoProperties properties, ApplicationContext context) {
		return (args) -> {
			Duration warmUp = properties.warmUp();
			if (properties.warmUpOn() != On.STARTUP || !warmUp.isPositive()) {
				return;
			}
			AvailabilityChangeEvent.publish(context, ReadinessState.REFUSING_TRAFFIC);
			logger.info("Warming up for " + warmUp.toMillis() + " ms before taking traffic (demo.warm-up-on=startup) on "
					+ Thread.currentThread().getName() + ": readiness REFUSING_TRAFFIC, liveness CORRECT");
			long started = System.nanoTime();
			sleep(warmUp);
			logger.info("Warmed up after " + Duration.ofNanos(System.nanoTime() - started).toMillis()
					+ " ms: readiness ACCEPTING_TRAFFIC once Boot has called every runner");
		};
	}

	/**
	 * {@code event-loop}: WebFlux only (a servlet mode refuses the setting, {@link ModeStack}). The main
	 * server's event loops are those of Boot's {@link ReactorResourceFactory}: {@code NettyWebServer}
	 * runs the server on its {@code LoopResources} ({@code runOn}, preferring the native transport as
	 * {@code LoopResources.DEFAULT_NATIVE} says), and Reactor Netty serves its connections on
	 * {@code onServer(preferNative)} of them: the group asked for here, the same loops.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = Type.REACTIVE)
	static class OnTheEventLoops {

		@Bean
		EventLoopWarmUp warmUpOnTheEventLoops(DemoProperties properties, ReactorResourceFactory resources) {
			return new EventLoopWarmUp(properties, resources);
		}

	}

	/** A class, not a lambda, so that Spring reads the event type from it and calls it for that event only. */
	static final class EventLoopWarmUp implements ApplicationListener<ApplicationReadyEvent> {

		private final DemoProperties properties;

		private final ReactorResourceFactory resources;

		EventLoopWarmUp(DemoProperties properties, ReactorResourceFactory resources) {
			this.properties = properties;
			this.resources = resources;
		}

		/** Schedules and returns: the main thread goes on to publish ACCEPTING_TRAFFIC while the loops sleep. */
		@Override
		public void onApplicationEvent(ApplicationReadyEvent event) {
			Duration warmUp = this.properties.warmUp();
			if (this.properties.warmUpOn() != On.EVENT_LOOP || !warmUp.isPositive()) {
				return;
			}
			List<EventExecutor> loops = new ArrayList<>();
			this.resources.getLoopResources().onServer(LoopResources.DEFAULT_NATIVE).forEach(loops::add);
			logger.info("Warming up for " + warmUp.toMillis() + " ms on each of the main server's " + loops.size()
					+ " event loops (demo.warm-up-on=event-loop): until it ends they answer nothing, probes included");
			long started = System.nanoTime();
			AtomicInteger left = new AtomicInteger(loops.size());
			for (EventExecutor loop : loops) {
				loop.execute(() -> {
					sleep(warmUp);
					if (left.decrementAndGet() == 0) {
						logger.info("Warmed up after " + Duration.ofNanos(System.nanoTime() - started).toMillis()
								+ " ms: the event loops serve again");
					}
				});
			}
		}

	}

	private static void sleep(Duration warmUp) {
		try {
			Thread.sleep(warmUp);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
