package io.livenesslab.service;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * What {@code /api/work} counts, the same on both stacks: the requests in flight
 * ({@code demo_requests_in_flight}, which the scripted run and the Live tab read) and how long each took
 * ({@code demo_work_latency_seconds}), both tagged with the mode; and the cap on requests in flight
 * ({@code demo.max-in-flight}), which counts the same requests, so a shed request is never counted.
 */
final class WorkMeters {

	private final AtomicInteger inFlight = new AtomicInteger();

	private final Timer latency;

	private final int cap;

	WorkMeters(DemoProperties properties, MeterRegistry registry) {
		this.cap = properties.maxInFlight();
		Gauge.builder("demo.requests.in.flight", this.inFlight, AtomicInteger::get)
			.description("Requests to /api/work being served now")
			.tag("mode", properties.mode().label())
			.register(registry);
		this.latency = Timer.builder("demo.work.latency")
			.description("Time /api/work took, from the handler's start to its answer")
			.tag("mode", properties.mode().label())
			.publishPercentileHistogram()
			.register(registry);
	}

	/**
	 * A request begins; over the cap it is refused ({@link TooBusyException}, a 429) and not counted.
	 * @return the requests in flight, this one included
	 */
	int begin() {
		int now = this.inFlight.incrementAndGet();
		if (this.cap > 0 && now > this.cap) {
			this.inFlight.decrementAndGet();
			throw new TooBusyException(this.cap);
		}
		return now;
	}

	/** A request that {@link #begin() began} at {@code startedNanos} ({@link System#nanoTime()}) has ended. */
	void end(long startedNanos) {
		this.inFlight.decrementAndGet();
		this.latency.record(System.nanoTime() - startedNanos, TimeUnit.NANOSECONDS);
	}

	int inFlight() {
		return this.inFlight.get();
	}

}
