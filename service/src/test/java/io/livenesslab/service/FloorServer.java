package io.livenesslab.service;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.codec.http.QueryStringDecoder;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.util.MultiValueMap;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The benchmark's floor: {@code GET /api/work} of the reactive mode on bare Reactor Netty, no Spring.
 * The same parameters and rules ({@link Latency#parse}, 400 problem+json naming the parameter), the same
 * wait (a timer on the connection's event loop, {@link LoopTimer}), the same JSON written by Jackson, and the
 * same event loops (Reactor Netty's defaults, so {@code -Dreactor.netty.ioWorkerCount} sets both). What it
 * leaves out is what Spring WebFlux and the actuator add: the handler chain, the router, the meters and the
 * observations. {@code scripts/bench.sh} runs it as one more row; it is built with the tests and never goes
 * into the image.
 *
 * <p>Arguments: {@code --server.port=N} (default 8080), {@code --demo.latency-ms=N} (1000),
 * {@code --demo.latency-max-ms=N} (60000), {@code --floor.layer=netty|adapter|webflux} (netty); others are
 * ignored so the bench can pass the service's own (and the service ignores {@code floor.layer}, so
 * {@code scripts/bench.sh --service-args --floor.layer=webflux} moves only the floor's row).
 * {@code GET /readyz} answers 200 once it listens.
 * <p>The layers split what the service costs over the floor: {@code netty} is the floor; {@code adapter}
 * adds Spring's reactive HTTP abstraction ({@code ReactorHttpHandlerAdapter}, {@code ServerHttpRequest} and
 * {@code ServerHttpResponse}) under the same hand-written handler; {@code webflux} runs the service's own
 * route and handler ({@code WorkEndpoint}: its meters, {@code ServerResponse}, Jackson's encoder, the
 * problem handler) through {@code RouterFunctions.toHttpHandler}, WebFlux's web handler chain, without
 * Spring Boot: no actuator, no other handler mappings, no dispatcher, no filters, no observation.
 */
public final class FloorServer {

	/** How much of Spring the floor runs (see the class comment). */
	enum Layer {

		NETTY, ADAPTER, WEBFLUX

	}

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private final long defaultMs;

	private final long capMs;

	private final AtomicInteger inFlight = new AtomicInteger();

	private final String pod = WorkEndpoint.Work.podName();

	private final Layer layer;

	FloorServer(long defaultMs, long capMs) {
		this(defaultMs, capMs, Layer.NETTY);
	}

	FloorServer(long defaultMs, long capMs, Layer layer) {
		this.defaultMs = defaultMs;
		this.capMs = capMs;
		this.layer = layer;
	}

	public static void main(String[] args) {
		Map<String, String> options = new LinkedHashMap<>();
		for (String arg : args) {
			int eq = arg.indexOf('=');
			if (arg.startsWith("--") && eq > 2) {
				options.put(arg.substring(2, eq), arg.substring(eq + 1));
			}
		}
		int port = Integer.parseInt(options.getOrDefault("server.port", "8080"));
		String named = options.getOrDefault("floor.layer", "netty");
		Layer layer = Arrays.stream(Layer.values())
			.filter((each) -> each.name().equalsIgnoreCase(named))
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("--floor.layer: netty, adapter or webflux, got '" + named + "'"));
		FloorServer floor = new FloorServer(Long.parseLong(options.getOrDefault("demo.latency-ms", "1000")),
				Long.parseLong(options.getOrDefault("demo.latency-max-ms", "60000")), layer);
		floor.start("127.0.0.1", port).onDispose().block();
	}

	DisposableServer start(String host, int port) {
		HttpServer server = HttpServer.create().host(host).port(port);
		return switch (this.layer) {
			case NETTY -> server
				.route((routes) -> routes.get(WorkEndpoint.PATH, this::work)
					.get("/readyz", (request, response) -> response.status(200).sendString(Mono.just("ok")))
					.get("/livez", (request, response) -> response.status(200).sendString(Mono.just("ok"))))
				.bindNow();
			case ADAPTER -> server.handle(new ReactorHttpHandlerAdapter(this::adapted)).bindNow();
			case WEBFLUX -> server.handle(new ReactorHttpHandlerAdapter(webflux())).bindNow();
		};
	}

	/** The netty layer: Reactor Netty's own request and response. */
	private Mono<Void> work(HttpServerRequest request, HttpServerResponse response) {
		Map<String, List<String>> query = new QueryStringDecoder(request.uri()).parameters();
		Duration latency;
		try {
			latency = latency(first(query, "latencyMs"), first(query, "minMs"), first(query, "maxMs"), first(query, "mix"));
		}
		catch (BadParameterException bad) {
			return response.status(400)
				.header("Content-Type", MediaType.APPLICATION_PROBLEM_JSON_VALUE)
				.sendByteArray(Mono.just(problem(bad, request.path().isEmpty() ? "/" : "/" + request.path())))
				.then();
		}
		return response.header("Content-Type", MediaType.APPLICATION_JSON_VALUE)
			.sendByteArray(answer(latency, request))
			.then();
	}

	/** The adapter layer: the same handler on Spring's {@code ServerHttpRequest} and {@code ServerHttpResponse}. */
	private Mono<Void> adapted(ServerHttpRequest request, ServerHttpResponse response) {
		if (!WorkEndpoint.PATH.equals(request.getPath().value())) {
			response.setStatusCode(HttpStatus.OK);
			return response.writeWith(Mono.just(response.bufferFactory().wrap("ok".getBytes(StandardCharsets.UTF_8))));
		}
		MultiValueMap<String, String> query = request.getQueryParams();
		Duration latency;
		try {
			latency = latency(query.getFirst("latencyMs"), query.getFirst("minMs"), query.getFirst("maxMs"),
					query.getFirst("mix"));
		}
		catch (BadParameterException bad) {
			response.setStatusCode(HttpStatus.BAD_REQUEST);
			response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
			return response.writeWith(Mono.just(response.bufferFactory().wrap(problem(bad, WorkEndpoint.PATH))));
		}
		response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
		return response.writeWith(answer(latency, ServerHttpRequestDecorator.getNativeRequest(request))
			.map(response.bufferFactory()::wrap));
	}

	/** The webflux layer: the service's own route and handler, on WebFlux's web handler chain, no Boot. */
	private HttpHandler webflux() {
		DemoProperties properties = new DemoProperties(Mode.REACTIVE.label(), this.defaultMs, this.capMs, null, 1,
				Duration.ZERO, 0, 0, Duration.ZERO, WarmUp.On.DEFAULT);
		// No downstream, so no downstream client: an empty provider of one.
		return RouterFunctions.toHttpHandler(new WorkEndpoint()
			.workRoute(properties, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
					new StaticListableBeanFactory().getBeanProvider(WebClient.class))
			.andRoute(RequestPredicates.GET("/readyz").or(RequestPredicates.GET("/livez")),
					(request) -> ServerResponse.ok().bodyValue("ok")));
	}

	private Duration latency(String latencyMs, String minMs, String maxMs, String mix) {
		return Latency.parse(latencyMs, minMs, maxMs, mix, this.defaultMs, this.capMs).next();
	}

	/** The answer's JSON, made when the wait (a timer on the loop of the connection of NATIVE) is over. */
	private Mono<byte[]> answer(Duration latency, Object nativeRequest) {
		long started = System.nanoTime();
		int now = this.inFlight.incrementAndGet();
		return LoopTimer.after(latency, LoopTimer.of(nativeRequest), 0L)
			.map((tick) -> JSON.writeValueAsBytes(new WorkEndpoint.WorkResult("floor", latency.toMillis(),
					Duration.ofNanos(System.nanoTime() - started).toMillis(), Thread.currentThread().getName(), this.pod,
					Math.max(now, this.inFlight.get()), false)))
			.doFinally((signal) -> this.inFlight.decrementAndGet());
	}

	/** The service's 400 for BAD (ProblemHandler's fields), as JSON. */
	private static byte[] problem(BadParameterException bad, String instance) {
		Map<String, Object> problem = new LinkedHashMap<>();
		problem.put("type", "about:blank");
		problem.put("title", "Bad request parameter");
		problem.put("status", 400);
		problem.put("detail", bad.getMessage());
		problem.put("instance", instance);
		problem.put("parameter", bad.parameter());
		problem.put("rule", bad.getMessage());
		return JSON.writeValueAsBytes(problem);
	}

	private static String first(Map<String, List<String>> query, String name) {
		List<String> values = query.get(name);
		return (values == null || values.isEmpty()) ? null : values.get(0);
	}

}
