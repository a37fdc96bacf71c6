package io.livenesslab.service;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import io.netty.channel.EventLoop;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * Waits out one request's latency the way the configured WebFlux {@link Mode} does, and says which
 * thread did the waiting. The three blocking-style modes share one blocking call (a sleep, or a blocking
 * HTTP GET to the downstream) and differ only in the thread they run it on. With {@code demo.cpu-ms} each
 * call first computes on that thread ({@link CpuWork}), and reactive's on the event loop.
 */
final class Waiter {

	private final Mode mode;

	private final URI downstream;

	private final Scheduler scheduler;

	private final Duration cpu;

	private final HttpClient blockingClient;

	private final WebClient reactiveClient;

	private Waiter(Mode mode, URI downstream, Scheduler scheduler, Duration cpu, HttpClient blockingClient,
			WebClient reactiveClient) {
		this.mode = mode;
		this.downstream = downstream;
		this.scheduler = scheduler;
		this.cpu = cpu;
		this.blockingClient = blockingClient;
		this.reactiveClient = reactiveClient;
	}

	/**
	 * The waiter of the configured mode. {@code downstreamClient} is {@link DownstreamClient}'s, the one the
	 * downstream health check shares, or null where there is none: reactive mode with a downstream needs it.
	 */
	static Waiter create(DemoProperties properties, WebClient downstreamClient) {
		Mode mode = properties.mode();
		URI downstream = properties.downstreamUrl();
		Scheduler scheduler = mode.scheduler();
		HttpClient blockingClient = (downstream != null && mode.blockingCall())
				? HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build() : null;
		WebClient reactiveClient = (downstream != null && !mode.blockingCall()) ? downstreamClient : null;
		if (downstream != null && !mode.blockingCall() && reactiveClient == null) {
			// Else the wait would silently be a timer, not the call the mode says.
			throw new IllegalStateException(
					"mode " + mode.label() + " calls the downstream through DownstreamClient's WebClient: none was given");
		}
		return new Waiter(mode, downstream, scheduler, Duration.ofMillis(properties.cpuMs()), blockingClient,
				reactiveClient);
	}

	/**
	 * Waits {@code latency}; the result names the thread that did the waiting. A reactive wait without a
	 * downstream is a timer on {@code loop}, the connection's event loop ({@link LoopTimer}).
	 */
	Mono<String> await(Duration latency, EventLoop loop) {
		if (!this.mode.blockingCall()) {
			return Mono.defer(() -> {
				compute();
				String thread = Thread.currentThread().getName();
				if (this.reactiveClient != null) {
					return this.reactiveClient.get().uri(downstreamUri(latency)).retrieve().toBodilessEntity()
						.thenReturn(thread);
				}
				return LoopTimer.after(latency, loop, thread);
			});
		}
		Mono<String> call = Mono.fromCallable(() -> {
			compute();
			blockingWait(latency);
			return Thread.currentThread().getName();
		});
		return call.subscribeOn(this.scheduler);
	}

	private void compute() {
		if (this.cpu.isPositive()) {
			CpuWork.spin(this.cpu);
		}
	}

	private void blockingWait(Duration latency) throws IOException, InterruptedException {
		if (this.blockingClient == null) {
			Thread.sleep(latency);
			return;
		}
		HttpRequest request = HttpRequest.newBuilder(downstreamUri(latency))
			.timeout(latency.plusSeconds(30))
			.GET()
			.build();
		HttpResponse<Void> response = this.blockingClient.send(request, HttpResponse.BodyHandlers.discarding());
		if (response.statusCode() >= 400) {
			throw new DownstreamException(this.downstream, response.statusCode());
		}
	}

	private URI downstreamUri(Duration latency) {
		return downstreamUri(this.downstream, latency);
	}

	/** The DOWNSTREAM URL with this request's latency, so the downstream waits what we would have. */
	static URI downstreamUri(URI downstream, Duration latency) {
		return UriComponentsBuilder.fromUri(downstream)
			.replaceQueryParam("latencyMs", latency.toMillis())
			.build(true)
			.toUri();
	}

	/** The downstream answered with an error status. */
	static final class DownstreamException extends IOException {

		DownstreamException(URI downstream, int status) {
			super("downstream " + downstream + " answered " + status);
		}

	}

}
