package io.livenesslab.service;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.handler.codec.http.QueryStringDecoder;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.databind.json.JsonMapper;

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
 * {@code --demo.latency-max-ms=N} (60000); others are ignored so the bench can pass the service's own.
 * {@code GET /readyz} answers 200 once it listens.
 */
public final class FloorServer {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private final long defaultMs;

	private final long capMs;

	private final AtomicInteger inFlight = new AtomicInteger();

	private final String pod = WorkEndpoint.Work.podName();

	FloorServer(long defaultMs, long capMs) {
		this.defaultMs = defaultMs;
		this.capMs = capMs;
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
		FloorServer floor = new FloorServer(Long.parseLong(options.getOrDefault("demo.latency-ms", "1000")),
				Long.parseLong(options.getOrDefault("demo.latency-max-ms", "60000")));
		floor.start("127.0.0.1", port).onDispose().block();
	}

	DisposableServer start(String host, int port) {
		return HttpServer.create()
			.host(host)
			.port(port)
			.route((routes) -> routes.get("/api/work", this::work)
				.get("/readyz", (request, response) -> response.status(200).sendString(Mono.just("ok")))
				.get("/livez", (request, response) -> response.status(200).sendString(Mono.just("ok"))))
			.bindNow();
	}

	private Mono<Void> work(HttpServerRequest request, HttpServerResponse response) {
		Map<String, List<String>> query = new QueryStringDecoder(request.uri()).parameters();
		Duration latency;
		try {
			latency = Latency.parse(first(query, "latencyMs"), first(query, "minMs"), first(query, "maxMs"),
					first(query, "mix"), this.defaultMs, this.capMs)
				.next();
		}
		catch (BadParameterException bad) {
			Map<String, Object> problem = new LinkedHashMap<>();
			problem.put("type", "about:blank");
			problem.put("title", "Bad request parameter");
			problem.put("status", 400);
			problem.put("detail", bad.getMessage());
			problem.put("instance", request.path().isEmpty() ? "/" : "/" + request.path());
			problem.put("parameter", bad.parameter());
			problem.put("rule", bad.getMessage());
			return response.status(400)
				.header("Content-Type", "application/problem+json")
				.sendByteArray(Mono.just(JSON.writeValueAsBytes(problem)))
				.then();
		}
		long started = System.nanoTime();
		int now = this.inFlight.incrementAndGet();
		Mono<byte[]> body = LoopTimer.after(latency, LoopTimer.of(request), 0L)
			.map((tick) -> JSON.writeValueAsBytes(new WorkEndpoint.WorkResult("floor", latency.toMillis(),
					Duration.ofNanos(System.nanoTime() - started).toMillis(), Thread.currentThread().getName(), this.pod,
					Math.max(now, this.inFlight.get()), false)))
			.doFinally((signal) -> this.inFlight.decrementAndGet());
		return response.header("Content-Type", "application/json").sendByteArray(body).then();
	}

	private static String first(Map<String, List<String>> query, String name) {
		List<String> values = query.get(name);
		return (values == null || values.isEmpty()) ? null : values.get(0);
	}

}
