package io.livenesslab.service;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code helm test} pods' HTTP check against a real local server: exit codes, the line per URL,
 * retries, and that it runs on the JRE and the application classes alone, as in the pod.
 */
class HttpCheckTests {

	private static final String LINE = "http://127\\.0\\.0\\.1:\\d+%s -> HTTP %d in \\d+\\.\\d{3}s";

	/** Fast retries: 2 retries 50 ms apart, 2 s per attempt. */
	private final HttpCheck check = new HttpCheck(2, Duration.ofMillis(50), Duration.ofSeconds(2));

	private final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();

	private final ExecutorService handlers = Executors.newCachedThreadPool();

	private HttpServer server;

	private final ByteArrayOutputStream out = new ByteArrayOutputStream();

	private final ByteArrayOutputStream err = new ByteArrayOutputStream();

	@BeforeEach
	void startServer() throws IOException {
		this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		this.server.setExecutor(this.handlers);
		this.server.createContext("/readyz", (exchange) -> answer(exchange, 200, "{\"status\":\"UP\"}"));
		this.server.createContext("/api/work", (exchange) -> answer(exchange, 200, "{\"mode\":\"reactive\"}"));
		this.server.createContext("/broken", (exchange) -> answer(exchange, 500, "{\"title\":\"Internal Server Error\"}"));
		this.server.createContext("/missing", (exchange) -> answer(exchange, 404, ""));
		// Not Ready for its first two requests, like a pod whose readiness has not caught up yet.
		this.server.createContext("/warming-up", (exchange) -> answer(exchange, (hits("/warming-up") < 2) ? 503 : 200, ""));
		this.server.createContext("/hanging", (exchange) -> {
			count(exchange);
			try {
				Thread.sleep(30_000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			exchange.close();
		});
		this.server.start();
	}

	@AfterEach
	void stopServer() {
		this.handlers.shutdownNow();
		this.server.stop(0);
	}

	@Test
	void everyUrlAnswering200ExitsZeroWithOneLinePerUrl() {
		assertThat(run(url("/readyz"), url("/api/work?latencyMs=10"))).isZero();
		assertThat(lines(this.out)).hasSize(2);
		assertThat(lines(this.out).get(0)).matches(LINE.formatted("/readyz", 200));
		assertThat(lines(this.out).get(1)).matches(LINE.formatted("/api/work\\?latencyMs=10", 200));
		assertThat(this.err.toString(StandardCharsets.UTF_8)).isEmpty();
	}

	@Test
	void aServerErrorOnTheSecondUrlExitsOneAfterPrintingTheFirstAndStopsThere() {
		assertThat(run(url("/readyz"), url("/broken"), url("/api/work"))).isEqualTo(1);
		assertThat(lines(this.out)).hasSize(2);
		assertThat(lines(this.out).get(0)).matches(LINE.formatted("/readyz", 200));
		assertThat(lines(this.out).get(1)).matches(LINE.formatted("/broken", 500));
		// A 5xx is retried (the pod may be restarting), then the body says why it failed.
		assertThat(hits("/broken")).isEqualTo(1 + 2);
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("retrying in 0.1s, 2 retries left")
			.contains("Internal Server Error");
		// --fail-early: nothing after the first failure is asked.
		assertThat(hits("/api/work")).isZero();
	}

	@Test
	void nothingListeningExitsOneAfterItsRetries() throws IOException {
		int port;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			port = socket.getLocalPort();
		}
		String url = "http://127.0.0.1:" + port + "/readyz";
		long start = System.nanoTime();
		assertThat(run(url)).isEqualTo(1);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(2 * 50));
		assertThat(lines(this.err)).hasSize(2)
			.allSatisfy((line) -> assertThat(line).startsWith(url + " -> failed (ConnectException"));
		assertThat(lines(this.err).get(1)).endsWith("1 retry left");
		assertThat(lines(this.out)).singleElement()
			.satisfies((line) -> assertThat(line).startsWith(url + " -> failed (ConnectException"));
	}

	/** A pod still warming up (503 twice, then 200) passes within the retries; a 404 fails at once. */
	@ParameterizedTest(name = "{0}: exit {1} after {2} attempt(s), answered {3}")
	@CsvSource({ "/warming-up, 0, 3, 200", "/missing, 1, 1, 404" })
	void retriesWhatMayStillBecomeReadyAndNothingElse(String path, int exitCode, int attempts, int status) {
		assertThat(run(url(path))).isEqualTo(exitCode);
		assertThat(hits(path)).isEqualTo(attempts);
		assertThat(lines(this.out)).singleElement().asString().matches(LINE.formatted(path, status));
	}

	@Test
	void anAnswerSlowerThanTheTimeoutFailsEachAttemptAtTheTimeout() {
		HttpCheck quick = new HttpCheck(1, Duration.ofMillis(50), Duration.ofMillis(300));
		long start = System.nanoTime();
		int exitCode = quick.run(new String[] { url("/hanging") }, print(this.out), print(this.err));
		assertThat(exitCode).isEqualTo(1);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(2 * 300), Duration.ofSeconds(5));
		assertThat(hits("/hanging")).isEqualTo(2);
		assertThat(lines(this.out)).singleElement().asString().contains("/hanging -> failed (").contains("Timeout");
	}

	@Test
	void noArgumentsExitsTwoWithTheUsage() {
		assertThat(run()).isEqualTo(2);
		assertThat(this.out.toString(StandardCharsets.UTF_8)).isEmpty();
		assertThat(lines(this.err)).singleElement().asString().startsWith("usage: java -cp /app/BOOT-INF/classes io.livenesslab.service.HttpCheck URL...");
	}

	@ParameterizedTest
	@ValueSource(strings = { "--fail", "127.0.0.1:8080/readyz", "ftp://127.0.0.1/readyz", "http://bad host/readyz" })
	void aBadUrlExitsTwoBeforeAskingAnything(String badUrl) {
		assertThat(run(url("/readyz"), badUrl)).isEqualTo(2);
		assertThat(hits("/readyz")).isZero();
		assertThat(this.err.toString(StandardCharsets.UTF_8)).contains("bad URL '" + badUrl + "'").contains("usage: ");
	}

	@Test
	void runsOnTheJreAndTheApplicationClassesAloneLikeTheTestPod() throws Exception {
		// The application classes only, as /app/BOOT-INF/classes in the image: no Spring, no dependency.
		Path classes = Path.of(HttpCheck.class.getProtectionDomain().getCodeSource().getLocation().toURI());
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		// The test pod's JVM flags (chart/templates/tests/test-api-work.yaml).
		Process process = new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss256k", "-Xmx32m",
				"-XX:-UsePerfData", "-Djava.io.tmpdir=/tmp", "-cp", classes.toString(), HttpCheck.class.getName(),
				url("/readyz"), url("/api/work?latencyMs=10"))
			.redirectErrorStream(true)
			.start();
		assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.exitValue()).as(output).isZero();
		assertThat(output.lines().toList()).hasSize(2).last().asString().matches(LINE.formatted("/api/work\\?latencyMs=10", 200));
	}

	private int run(String... args) {
		return this.check.run(args, print(this.out), print(this.err));
	}

	private String url(String pathAndQuery) {
		return "http://127.0.0.1:" + this.server.getAddress().getPort() + pathAndQuery;
	}

	private int hits(String path) {
		return this.hits.computeIfAbsent(path, (key) -> new AtomicInteger()).get();
	}

	private void answer(HttpExchange exchange, int status, String body) throws IOException {
		count(exchange);
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		exchange.sendResponseHeaders(status, (bytes.length == 0) ? -1 : bytes.length);
		try (OutputStream stream = exchange.getResponseBody()) {
			stream.write(bytes);
		}
	}

	private void count(HttpExchange exchange) {
		this.hits.computeIfAbsent(exchange.getHttpContext().getPath(), (key) -> new AtomicInteger()).incrementAndGet();
	}

	private static PrintStream print(ByteArrayOutputStream bytes) {
		return new PrintStream(bytes, true, StandardCharsets.UTF_8);
	}

	private static List<String> lines(ByteArrayOutputStream bytes) {
		return bytes.toString(StandardCharsets.UTF_8).lines().toList();
	}

}
