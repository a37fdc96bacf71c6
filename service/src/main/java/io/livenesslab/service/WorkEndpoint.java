package io.livenesslab.service;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.netty.channel.EventLoop;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.enums.ParameterIn;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import org.springdoc.core.annotations.RouterOperation;
import reactor.core.publisher.Mono;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * {@code GET /api/work}: waits the simulated latency the configured way and says how it went.
 * <p>
 * A functional endpoint, not an annotated controller: WebFlux's annotated path (condition matching,
 * argument resolvers, return value adapters) made about half of what a request allocated (JFR, issue 15),
 * and with thousands of requests in flight the collector copies every live one. Every handler here
 * returns a {@code Mono}, so {@code spring.threads.virtual.enabled} (which moves annotated handlers that
 * return plain values to virtual threads) cannot quietly stop "blocking" from blocking.
 */
@Configuration(proxyBeanMethods = false)
class WorkEndpoint {

	static final String PATH = "/api/work";

	private static final String LATENCY_MS = "latencyMs";

	private static final String MIN_MS = "minMs";

	private static final String MAX_MS = "maxMs";

	private static final String MIX = "mix";

	@Bean
	@RouterOperation(path = PATH, method = RequestMethod.GET, produces = MediaType.APPLICATION_JSON_VALUE,
			operation = @Operation(operationId = "work", summary = "Wait the simulated latency in this pod's mode",
					description = "Give at most one of latencyMs, minMs+maxMs, or mix; none means the configured default.",
					parameters = {
							@Parameter(in = ParameterIn.QUERY, name = LATENCY_MS, schema = @Schema(type = "string"),
									description = "Fixed latency in ms, 0 to the cap (demo.latency-max-ms); without it, demo.latency-ms"),
							@Parameter(in = ParameterIn.QUERY, name = MIN_MS, schema = @Schema(type = "string"),
									description = "Lower bound of a uniform latency in ms (with maxMs)"),
							@Parameter(in = ParameterIn.QUERY, name = MAX_MS, schema = @Schema(type = "string"),
									description = "Upper bound of a uniform latency in ms (with minMs)"),
							@Parameter(in = ParameterIn.QUERY, name = MIX, schema = @Schema(type = "string"),
									description = "Weighted mix of latencies, ms:percent pairs adding up to 100, e.g. 1000:80,4000:20") },
					responses = {
							@ApiResponse(responseCode = "200", description = "Waited",
									content = @Content(mediaType = MediaType.APPLICATION_JSON_VALUE, schema = @Schema(implementation = WorkResult.class))),
							@ApiResponse(responseCode = "400", description = "A parameter broke a rule (problem+json naming it)",
									content = @Content(mediaType = MediaType.APPLICATION_PROBLEM_JSON_VALUE)),
							@ApiResponse(responseCode = "429", description = "Over demo.max-in-flight (problem+json, Retry-After)",
									content = @Content(mediaType = MediaType.APPLICATION_PROBLEM_JSON_VALUE)) }))
	RouterFunction<ServerResponse> workRoute(DemoProperties properties, MeterRegistry registry) {
		Work work = new Work(properties, registry);
		return RouterFunctions.route()
			.GET(PATH, work::handle)
			.onError(ProblemHandler::handles, ProblemHandler::render)
			.build();
	}

	/** The answer of {@code /api/work}. */
	record WorkResult(String mode, long requestedMs, long waitedMs, String thread, String pod, int inFlight,
			boolean downstream) {
	}

	/** The handler, with the meters a user looks at: requests in flight and their latency, per mode. */
	static final class Work {

		private final DemoProperties properties;

		private final Waiter waiter;

		private final AtomicInteger inFlight = new AtomicInteger();

		private final Timer latencyTimer;

		private final String pod = podName();

		Work(DemoProperties properties, MeterRegistry registry) {
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

		Mono<ServerResponse> handle(ServerRequest request) {
			return Mono.defer(() -> {
				Duration latency = Latency
					.parse(param(request, LATENCY_MS), param(request, MIN_MS), param(request, MAX_MS), param(request, MIX),
							this.properties.latencyMs(), this.properties.latencyMaxMs())
					.next();
				EventLoop loop = LoopTimer.of(ServerHttpRequestDecorator.getNativeRequest(request.exchange().getRequest()));
				return work(latency, loop);
			}).flatMap((result) -> ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(result));
		}

		private Mono<WorkResult> work(Duration latency, EventLoop loop) {
			long started = System.nanoTime();
			int now = this.inFlight.incrementAndGet();
			int cap = this.properties.maxInFlight();
			if (cap > 0 && now > cap) {
				this.inFlight.decrementAndGet();
				return Mono.error(new TooBusyException(cap));
			}
			return this.waiter.await(latency, loop)
				.map((thread) -> new WorkResult(this.properties.mode().label(), latency.toMillis(),
						Duration.ofNanos(System.nanoTime() - started).toMillis(), thread, this.pod,
						Math.max(now, this.inFlight.get()), this.properties.downstreamUrl() != null))
				.doFinally((signal) -> {
					this.inFlight.decrementAndGet();
					this.latencyTimer.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
				});
		}

		private static String param(ServerRequest request, String name) {
			return request.queryParam(name).orElse(null);
		}

		/** The pod's name (HOSTNAME in a pod), else the host's. */
		static String podName() {
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

}
