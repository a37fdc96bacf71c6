package io.livenesslab.service;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.WebServer;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The real service, started on a random port in this JVM, and the HTTP calls the tests make to it:
 * slow requests left in flight, and probes made the way kubelet makes them (a new connection each
 * time, a hard timeout).
 */
final class RunningService implements AutoCloseable {

	private final ConfigurableApplicationContext context;

	private final Map<String, WebServer> webServers;

	private final HttpClient loadClient = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private final List<CompletableFuture<HttpResponse<String>>> inFlight = new ArrayList<>();

	private RunningService(ConfigurableApplicationContext context, Map<String, WebServer> webServers) {
		this.context = context;
		this.webServers = webServers;
	}

	/** Starts the service with these properties over application.yaml (as command-line arguments), on random ports. */
	static RunningService start(Map<String, Object> properties) {
		Map<String, Object> all = new HashMap<>(properties);
		all.putIfAbsent("server.port", 0);
		// Tests must not wait out a graceful shutdown behind deliberately stuck requests.
		all.putIfAbsent("server.shutdown", "immediate");
		// Nor a drain: only the tests of the drain itself want one.
		all.putIfAbsent("demo.drain", "0s");
		String[] args = all.entrySet().stream().map((entry) -> "--" + entry.getKey() + "=" + entry.getValue()).toArray(String[]::new);
		Map<String, WebServer> webServers = new ConcurrentHashMap<>();
		ApplicationListener<WebServerInitializedEvent> started = (event) -> webServers
			.put(Objects.requireNonNullElse(event.getApplicationContext().getServerNamespace(), "main"), event.getWebServer());
		return new RunningService(new SpringApplicationBuilder(ServiceApplication.class).listeners(started).run(args),
				webServers);
	}

	static RunningService start(Mode mode) {
		return start(Map.of("demo.mode", mode.label()));
	}

	URI uri(String pathAndQuery) {
		return URI.create("http://127.0.0.1:" + port("local.server.port") + pathAndQuery);
	}

	URI managementUri(String pathAndQuery) {
		return URI.create("http://127.0.0.1:" + port("local.management.port") + pathAndQuery);
	}

	private String port(String property) {
		return this.context.getEnvironment().getRequiredProperty(property);
	}

	ConfigurableApplicationContext context() {
		return this.context;
	}

	/** The web servers that started, by namespace: "main", and "management" with management.server.port. */
	Map<String, WebServer> webServers() {
		return this.webServers;
	}

	/** Sends {@code count} requests to {@code pathAndQuery} and leaves them in flight. */
	void sendSlow(int count, String pathAndQuery) {
		for (int i = 0; i < count; i++) {
			HttpRequest request = HttpRequest.newBuilder(uri(pathAndQuery)).timeout(Duration.ofMinutes(2)).build();
			this.inFlight.add(this.loadClient.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
		}
	}

	/** The service's own count of /api/work requests being served. */
	int requestsInFlight() {
		MeterRegistry registry = this.context.getBean(MeterRegistry.class);
		return (int) registry.get("demo.requests.in.flight").gauge().value();
	}

	/** Waits until the service is serving at least {@code count} requests at once. */
	void awaitInFlight(int count, Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (requestsInFlight() < count) {
			if (System.nanoTime() > deadline) {
				throw new AssertionError("only " + requestsInFlight() + " of " + count + " requests in flight after " + timeout);
			}
			Thread.sleep(20);
		}
	}

	/** What the slow requests answered, waiting for them. */
	List<HttpResponse<String>> slowResponses() {
		return this.inFlight.stream().map(CompletableFuture::join).toList();
	}

	/**
	 * One probe as kubelet makes it: a fresh connection and a hard timeout.
	 * @return the status code and the time it took, or status 0 on timeout
	 */
	static ProbeResult probe(URI uri, Duration timeout) throws IOException, InterruptedException {
		long started = System.nanoTime();
		try (HttpClient client = HttpClient.newBuilder().connectTimeout(timeout).build()) {
			HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).header("User-Agent", "kube-probe/1.37").build();
			int status = client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
			return new ProbeResult(status, Duration.ofNanos(System.nanoTime() - started));
		}
		catch (HttpTimeoutException ex) {
			return new ProbeResult(0, Duration.ofNanos(System.nanoTime() - started));
		}
	}

	static HttpResponse<String> get(URI uri) throws IOException, InterruptedException {
		try (HttpClient client = HttpClient.newHttpClient()) {
			return client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build(),
					HttpResponse.BodyHandlers.ofString());
		}
	}

	record ProbeResult(int status, Duration took) {
		boolean timedOut() {
			return this.status == 0;
		}
	}

	@Override
	public void close() {
		this.inFlight.forEach((request) -> request.cancel(true));
		this.loadClient.shutdownNow();
		this.context.close();
	}

}
