package io.livenesslab.service;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import reactor.core.publisher.Mono;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /api/work}: waits the simulated latency the configured way and says how it went. */
@RestController
class WorkController {

	private final DemoProperties properties;

	private final Waiter waiter;

	private final AtomicInteger inFlight = new AtomicInteger();

	private final Timer latencyTimer;

	private final String pod = podName();

	WorkController(DemoProperties properties, MeterRegistry registry) {
		this.properties = properties;
		this.waiter = Waiter.create(properties);
		Gauge.builder("demo.requests.in.flight", this.inFlight, AtomicInteger::get)
			.description("Requests to /api/work being served now")
			.tag("mode", properties.mode().label())
			.register(registry);
		this.latencyTimer = Timer.builder("demo.work.latency")
			.description("Time /api/work took, from the handler's start to its answer")
			.tag("mode", properties.mode().label())
			.publishPercentileHistogram()
			.register(registry);
	}

	/** The answer of {@code /api/work}. */
	record WorkResult(String mode, long requestedMs, long waitedMs, String thread, String pod, int inFlight,
			boolean downstream) {
	}

	// Returns a Mono on purpose: with spring.threads.virtual.enabled, WebFlux moves handlers that
	// return plain values to virtual threads, which would quietly stop "blocking" from blocking.
	@GetMapping(path = "/api/work", produces = "application/json")
	@Operation(summary = "Wait the simulated latency in this pod's mode",
			description = "Give at most one of latencyMs, minMs+maxMs, or mix; none means the configured default.")
	Mono<WorkResult> work(
			@Parameter(description = "Fixed latency in ms, 0 to the cap (demo.latency-max-ms); without it, demo.latency-ms") @RequestParam(required = false) String latencyMs,
			@Parameter(description = "Lower bound of a uniform latency in ms (with maxMs)") @RequestParam(required = false) String minMs,
			@Parameter(description = "Upper bound of a uniform latency in ms (with minMs)") @RequestParam(required = false) String maxMs,
			@Parameter(description = "Weighted mix of latencies, ms:percent pairs adding up to 100, e.g. 1000:80,4000:20") @RequestParam(required = false) String mix) {
		Duration latency = Latency.parse(latencyMs, minMs, maxMs, mix, this.properties.latencyMs(),
				this.properties.latencyMaxMs()).next();
		return Mono.defer(() -> {
			long started = System.nanoTime();
			int now = this.inFlight.incrementAndGet();
			int cap = this.properties.maxInFlight();
			if (cap > 0 && now > cap) {
				this.inFlight.decrementAndGet();
				return Mono.error(new TooBusyException(cap));
			}
			return this.waiter.await(latency)
				.map((thread) -> new WorkResult(this.properties.mode().label(), latency.toMillis(),
						Duration.ofNanos(System.nanoTime() - started).toMillis(), thread, this.pod,
						Math.max(now, this.inFlight.get()), this.properties.downstreamUrl() != null))
				.doFinally((signal) -> {
					this.inFlight.decrementAndGet();
					this.latencyTimer.record(Duration.ofNanos(System.nanoTime() - started));
				});
		});
	}

	private static String podName() {
		String fromEnv = System.getenv("HOSTNAME");
		if (fromEnv != null && !fromEnv.isBlank()) {
			return fromEnv;
		}
		try {
			return InetAddress.getLocalHost().getHostName();
		}
		catch (UnknownHostException ex) {
			return "unknown";
		}
	}

}
