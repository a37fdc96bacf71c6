package io.livenesslab.service;

import java.net.URI;
import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.ConstructorBinding;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The demo's settings, under {@code demo.*} (environment: {@code APP_MODE}, {@code DEMO_LATENCY_MS},
 * {@code DEMO_LATENCY_MAX_MS}, {@code DEMO_DOWNSTREAM_URL}, {@code DEMO_DOWNSTREAM_MAX_CONNECTIONS},
 * {@code DEMO_DRAIN}, {@code DEMO_MAX_IN_FLIGHT}, {@code DEMO_CPU_MS}, {@code DEMO_WARM_UP},
 * {@code DEMO_WARM_UP_ON}).
 *
 * @param mode how requests wait, and on which stack: blocking, reactive, offloaded or virtual (WebFlux),
 *        servlet, servlet-async or servlet-virtual (Spring MVC)
 * @param latencyMs the latency of {@code /api/work} when a request names none
 * @param latencyMaxMs the cap on any latency a request asks for; above it the answer is 400
 * @param downstreamUrl when set, the wait is an HTTP GET to this URL instead of a timer
 * @param downstreamMaxConnections the reactive client's connection pool ({@link DownstreamClient}'s,
 *        which the downstream health check shares): thousands in flight, not Reactor Netty's default 500
 * @param drain how long a stopping service keeps serving, every answer with {@code Connection: close},
 *        before the web server's graceful shutdown begins (see {@link ConnectionDrain}): long enough for
 *        every busy keep-alive client to get one such answer and for the endpoint removal to reach every
 *        node's proxy
 * @param maxInFlight load shedding: at most this many {@code /api/work} requests in flight, every one
 *        above it answered 429 at once; 0 (the default) sheds nothing
 * @param cpuMs the CPU-bound step of every {@code /api/work} request, before its wait: this many ms of
 *        computing on the thread the mode runs its call on ({@link CpuWork}); 0 (the default) computes nothing
 * @param warmUp the work the service does once at start-up, a cache load ({@link WarmUp}); 0s (the default)
 *        is none
 * @param warmUpOn where the warm-up runs: {@code event-loop} (the default, the storm: on the main server's
 *        event loops once the application is ready, WebFlux only) or {@code startup} (the remedy: before
 *        readiness says ACCEPTING_TRAFFIC, off the threads that answer probes)
 */
@ConfigurationProperties("demo")
record DemoProperties(Mode mode, long latencyMs, long latencyMaxMs, URI downstreamUrl,
		int downstreamMaxConnections, Duration drain, int maxInFlight, long cpuMs, Duration warmUp, WarmUp.On warmUpOn) {

	@ConstructorBinding
	DemoProperties(@DefaultValue(Mode.DEFAULT) String mode, @DefaultValue("1000") long latencyMs,
			@DefaultValue("60000") long latencyMaxMs, URI downstreamUrl,
			@DefaultValue("10000") int downstreamMaxConnections, @DefaultValue("5s") Duration drain,
			@DefaultValue("0") int maxInFlight, @DefaultValue("0") long cpuMs, @DefaultValue("0s") Duration warmUp,
			@DefaultValue(WarmUp.On.DEFAULT) String warmUpOn) {
		this(Mode.parse(mode), latencyMs, latencyMaxMs, downstreamUrl, downstreamMaxConnections, drain, maxInFlight,
				cpuMs, warmUp, WarmUp.On.parse(warmUpOn));
	}

	DemoProperties {
		if (latencyMaxMs < 0) {
			throw new IllegalArgumentException("demo.latency-max-ms must be >= 0, got " + latencyMaxMs);
		}
		if (latencyMs < 0 || latencyMs > latencyMaxMs) {
			throw new IllegalArgumentException(
					"demo.latency-ms must be between 0 and demo.latency-max-ms (" + latencyMaxMs + "), got " + latencyMs);
		}
		if (downstreamMaxConnections < 1) {
			throw new IllegalArgumentException(
					"demo.downstream-max-connections must be >= 1, got " + downstreamMaxConnections);
		}
		if (drain.isNegative()) {
			throw new IllegalArgumentException("demo.drain must be >= 0, got " + drain);
		}
		if (maxInFlight < 0) {
			throw new IllegalArgumentException("demo.max-in-flight must be >= 0 (0: no cap), got " + maxInFlight);
		}
		if (cpuMs < 0 || cpuMs > latencyMaxMs) {
			throw new IllegalArgumentException(
					"demo.cpu-ms must be between 0 and demo.latency-max-ms (" + latencyMaxMs + "), got " + cpuMs);
		}
		if (warmUp.isNegative()) {
			throw new IllegalArgumentException("demo.warm-up (DEMO_WARM_UP) must be >= 0 (0s: none), got " + warmUp);
		}
	}

}
