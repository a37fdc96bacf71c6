package io.livenesslab.service;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.EventLoop;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.enums.ParameterIn;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import org.springdoc.core.annotations.RouterOperation;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * {@code GET /api/work} on WebFlux (the modes blocking, reactive, offloaded and virtual): waits the
 * simulated latency the configured way and says how it went. The servlet modes serve the same contract
 * from {@link WorkController}.
 * <p>
 * A functional endpoint, not an annotated controller: WebFlux's annotated path (condition matching,
 * argument resolvers, return value adapters) made about half of what a request allocated (JFR, issue 15),
 * and with thousands of requests in flight the collector copies every live one. Every handler here
 * returns a {@code Mono}, so {@code spring.threads.virtual.enabled} (which moves annotated handlers that
 * return plain values to virtual threads) cannot quietly stop "blocking" from blocking.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = Type.REACTIVE)
class WorkEndpoint {

	static final String PATH = "/api/work";

	static final String LATENCY_MS = "latencyMs";

	static final String MIN_MS = "minMs";

	static final String MAX_MS = "maxMs";

	static final String MIX = "mix";

	// The contract's words, shared with WorkController's annotations: one text on both stacks.

	static final String SUMMARY = "Wait the simulated latency in this pod's mode";

	static final String DESCRIPTION = "Give at most one of latencyMs, minMs+maxMs, or mix; none means the configured default.";

	static final String LATENCY_MS_DOC = "Fixed latency in ms, 0 to the cap (demo.latency-max-ms); without it, demo.latency-ms";

	static final String MIN_MS_DOC = "Lower bound of a uniform latency in ms (with maxMs)";

	static final String MAX_MS_DOC = "Upper bound of a uniform latency in ms (with minMs)";

	static final String MIX_DOC = "Weighted mix of latencies, ms:percent pairs adding up to 100, e.g. 1000:80,4000:20";

	static final String WAITED = "Waited";

	static final String BAD_PARAMETER = "A parameter broke a rule (problem+json naming it)";

	static final String TOO_BUSY = "Over demo.max-in-flight (problem+json, Retry-After)";

	@Bean
	@RouterOperation(path = PATH, method = RequestMethod.GET, produces = MediaType.APPLICATION_JSON_VALUE,
			operation = @Operation(operationId = "work", summary = SUMMARY, description = DESCRIPTION,
					parameters = {
							@Parameter(in = ParameterIn.QUERY, name = LATENCY_MS, schema = @Schema(type = "string"),
									description = LATENCY_MS_DOC),
							@Parameter(in = ParameterIn.QUERY, name = MIN_MS, schema = @Schema(type = "string"),
									description = MIN_MS_DOC),
							@Parameter(in = ParameterIn.QUERY, name = MAX_MS, schema = @Schema(type = "string"),
									description = MAX_MS_DOC),
							@Parameter(in = ParameterIn.QUERY, name = MIX, schema = @Schema(type = "string"),
									description = MIX_DOC) },
					responses = {
							@ApiResponse(responseCode = "200", description = WAITED,
									content = @Content(mediaType = MediaType.APPLICATION_JSON_VALUE, schema = @Schema(implementation = WorkResult.class))),
							@ApiResponse(responseCode = "400", description = BAD_PARAMETER,
									content = @Content(mediaType = MediaType.APPLICATION_PROBLEM_JSON_VALUE)),
							@ApiResponse(responseCode = "429", description = TOO_BUSY,
									content = @Content(mediaType = MediaType.APPLICATION_PROBLEM_JSON_VALUE)) }))
	RouterFunction<ServerResponse> workRoute(DemoProperties properties, MeterRegistry registry,
			ObjectProvider<WebClient> downstreamClient) {
		Work work = new Work(properties, registry, downstreamClient.getIfAvailable());
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

		private final WorkMeters meters;

		private final String pod = podName();

		Work(DemoProperties properties, MeterRegistry registry, WebClient downstreamClient) {
			this.properties = properties;
			this.waiter = Waiter.create(properties, downstreamClient);
			this.meters = new WorkMeters(properties, registry);
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
			int now;
			try {
				now = this.meters.begin();
			}
			catch (TooBusyException ex) {
				return Mono.error(ex);
			}
			return this.waiter.await(latency, loop)
				.map((thread) -> new WorkResult(this.properties.mode().label(), latency.toMillis(),
						Duration.ofNanos(System.nanoTime() - started).toMillis(), thread, this.pod,
						Math.max(now, this.meters.inFlight()), this.properties.downstreamUrl() != null))
				.doFinally((signal) -> this.meters.end(started));
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
