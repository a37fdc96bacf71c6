package io.livenesslab.service;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import reactor.core.scheduler.Schedulers;

import io.livenesslab.service.RunningService.ProbeResult;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The claim of the whole demo, on the real server with 4 event loops
 * ({@code -Dreactor.netty.ioWorkerCount=4}, set for every test in the pom): with slow requests in
 * flight, a liveness probe with kubelet's 1 s timeout times out in blocking mode and is answered at
 * once in reactive and virtual mode, and in offloaded mode while boundedElastic has threads to spare.
 */
class LivenessUnderLoadTests {

	private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);

	private static final int PROBES = 3;

	/** boundedElastic's thread cap: 10 per core. */
	private static final int BOUNDED_ELASTIC_THREADS = Schedulers.DEFAULT_BOUNDED_ELASTIC_SIZE;

	@ParameterizedTest(name = "{0} mode with {1} requests of {2} ms in flight: liveness answers 200 within 1 s")
	@CsvSource({ "reactive, 1000, 8000", "virtual, 1000, 8000" })
	void livenessStaysUpWhileRequestsWait(String mode, int requests, int latencyMs) throws Exception {
		assertProbesAnswer(mode, requests, latencyMs);
	}

	@Test
	void offloadedLivenessStaysUpWhileBoundedElasticHasFreeThreads() throws Exception {
		assertProbesAnswer("offloaded", BOUNDED_ELASTIC_THREADS / 2, 8000);
	}

	/**
	 * The offloaded fix holds only while boundedElastic has a free thread: Spring Boot runs every
	 * non-reactive health indicator (liveness included) on boundedElastic too (HealthIndicatorAdapter),
	 * so once sleeping requests hold all its threads the probe queues behind them and times out.
	 */
	@Test
	void offloadedLivenessTimesOutOnceBoundedElasticIsFull() throws Exception {
		try (RunningService service = RunningService.start(Mode.OFFLOADED)) {
			service.sendSlow(BOUNDED_ELASTIC_THREADS * 3, "/api/work?latencyMs=8000");
			service.awaitInFlight(BOUNDED_ELASTIC_THREADS * 3, Duration.ofSeconds(30));
			List<ProbeResult> probes = probe(service, "/livez");
			System.out.printf("offloaded, %d in flight on %d boundedElastic threads: /livez %s%n",
					service.requestsInFlight(), BOUNDED_ELASTIC_THREADS, probes);
			assertThat(probes).allSatisfy((probe) -> assertThat(probe.timedOut()).isTrue());
		}
	}

	/**
	 * The remedy {@code demo.liveness-off-pool} and its lesson: liveness answered from the event loop
	 * keeps saying UP while boundedElastic is full; readiness, still on the pool, times out with the
	 * requests.
	 */
	@Test
	void offloadedLivenessOffThePoolAnswersWhileBoundedElasticIsFull() throws Exception {
		try (RunningService service = RunningService.start(
				Map.of("demo.mode", "offloaded", "demo.liveness-off-pool", true))) {
			service.sendSlow(BOUNDED_ELASTIC_THREADS * 3, "/api/work?latencyMs=8000");
			service.awaitInFlight(BOUNDED_ELASTIC_THREADS * 3, Duration.ofSeconds(30));
			List<ProbeResult> liveness = probe(service, "/livez");
			List<ProbeResult> readiness = probe(service, "/readyz");
			System.out.printf("offloaded, liveness off the pool, %d in flight: /livez %s, /readyz %s%n",
					service.requestsInFlight(), liveness, readiness);
			assertThat(liveness).allSatisfy((probe) -> assertThat(probe.status()).isEqualTo(200));
			assertThat(readiness).allSatisfy((probe) -> assertThat(probe.timedOut()).isTrue());
		}
	}

	/**
	 * Load shedding ({@code demo.max-in-flight}) below boundedElastic's thread count: the requests over
	 * the cap are answered 429 problem+json while the others still wait, and the pool keeps free threads
	 * for the liveness check.
	 */
	@Test
	void offloadedWithACapOnRequestsInFlightShedsTheRestAndStaysAlive() throws Exception {
		int cap = BOUNDED_ELASTIC_THREADS / 2;
		try (RunningService service = RunningService.start(Map.of("demo.mode", "offloaded", "demo.max-in-flight", cap))) {
			service.sendSlow(cap, "/api/work?latencyMs=8000");
			service.awaitInFlight(cap, Duration.ofSeconds(30));
			HttpResponse<String> shed = RunningService.get(service.uri("/api/work?latencyMs=8000"));
			assertThat(shed.statusCode()).isEqualTo(429);
			assertThat(shed.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			assertThat(shed.headers().firstValue("Retry-After")).hasValue("1");
			assertThat(shed.body()).contains("\"maxInFlight\":" + cap);
			assertThat(service.requestsInFlight()).as("the shed request never counted, the others still wait").isEqualTo(cap);
			assertThat(probe(service, "/livez")).allSatisfy((probe) -> assertThat(probe.status()).isEqualTo(200));
		}
	}

	/**
	 * A client that keeps its connection after a 429 must get its next answer. Reactor Netty 1.3.7 could
	 * stop reading a keep-alive connection when a request queued behind a slower one was answered at once
	 * (reactor/reactor-netty#4361): the next request then sat unread in the socket until the client gave
	 * up, the shedding scenario's stray timeouts. Here: one slow request fills a cap of 1; on one
	 * connection, /livez (answered off the event loop) and /api/work (refused at once) are sent
	 * together, then a third request after both answers.
	 */
	@Test
	void aKeepAliveConnectionIsStillReadAfterA429() throws Exception {
		try (RunningService service = RunningService.start(Map.of("demo.mode", "reactive", "demo.max-in-flight", 1))) {
			service.sendSlow(1, "/api/work?latencyMs=8000");
			service.awaitInFlight(1, Duration.ofSeconds(30));
			int port = service.uri("/").getPort();
			try (Socket socket = new Socket("127.0.0.1", port)) {
				socket.setSoTimeout(5_000);
				InputStream in = new BufferedInputStream(socket.getInputStream());
				OutputStream out = socket.getOutputStream();
				ByteArrayOutputStream both = new ByteArrayOutputStream();
				both.writeBytes(KeepAliveClient.request(port, "/livez"));
				both.writeBytes(KeepAliveClient.request(port, "/api/work"));
				out.write(both.toByteArray()); // one write: the two requests arrive together
				out.flush();
				assertThat(KeepAliveClient.Answer.read(in).status()).isEqualTo(200);
				assertThat(KeepAliveClient.Answer.read(in).status()).isEqualTo(429);
				out.write(KeepAliveClient.request(port, "/api/work"));
				out.flush();
				assertThat(answerWithin(in, "the request after the 429, on the same connection")).isEqualTo(429);
			}
		}
	}

	private static int answerWithin(InputStream in, String what) throws IOException {
		try {
			return KeepAliveClient.Answer.read(in).status();
		}
		catch (SocketTimeoutException ex) {
			throw new AssertionError("no answer to " + what + " within the socket timeout: the server stopped reading it", ex);
		}
	}

	private static void assertProbesAnswer(String mode, int requests, int latencyMs) throws Exception {
		try (RunningService service = RunningService.start(Map.of("demo.mode", mode))) {
			service.sendSlow(requests, "/api/work?latencyMs=" + latencyMs);
			service.awaitInFlight(requests, Duration.ofSeconds(30));
			List<ProbeResult> probes = probe(service, "/livez");
			System.out.printf("%s, %d in flight: /livez %s%n", mode, service.requestsInFlight(), probes);
			assertThat(probes).allSatisfy((probe) -> assertThat(probe.status()).isEqualTo(200));
			assertThat(probe(service, "/actuator/health/liveness"))
				.allSatisfy((probe) -> assertThat(probe.status()).isEqualTo(200));
		}
	}

	@ParameterizedTest(name = "blocking mode (virtual threads enabled: {0}): liveness times out")
	@CsvSource({ "false", "true" })
	void livenessTimesOutWhileBlockingRequestsHoldEveryEventLoop(boolean virtualThreads) throws Exception {
		try (RunningService service = RunningService.start(
				Map.of("demo.mode", "blocking", "spring.threads.virtual.enabled", virtualThreads))) {
			holdEveryEventLoop(service);
			List<ProbeResult> probes = probe(service, "/livez");
			System.out.printf("blocking (virtual threads %s): /livez %s%n", virtualThreads, probes);
			assertThat(probes).allSatisfy((probe) -> assertThat(probe.timedOut()).isTrue());
			// Once the loops wake up, the same probe answers again: nothing was broken but time.
			assertThat(service.slowResponses()).allSatisfy((response) -> {
				assertThat(response.statusCode()).isEqualTo(200);
				assertThat(response.body()).contains("\"thread\":\"reactor-http-");
			});
			assertThat(RunningService.probe(service.uri("/livez"), PROBE_TIMEOUT).status()).isEqualTo(200);
		}
	}

	@Test
	void separateManagementPortDoesNotFreeTheMainPortProbes() throws Exception {
		try (RunningService service = RunningService.start(
				Map.of("demo.mode", "blocking", "management.server.port", 0))) {
			holdEveryEventLoop(service);
			List<ProbeResult> main = probe(service, "/livez");
			List<ProbeResult> management = new ArrayList<>();
			for (int i = 0; i < PROBES; i++) {
				management.add(RunningService.probe(service.managementUri("/actuator/health/liveness"), PROBE_TIMEOUT));
			}
			// Reactor Netty's event loops are shared by every server in the JVM (spring-framework#35238):
			// the management port answers only when its connection lands on a loop that is not asleep.
			System.out.printf("blocking with management port: main /livez %s, management liveness %s%n", main, management);
			assertThat(main).allSatisfy((probe) -> assertThat(probe.timedOut()).isTrue());
		}
	}

	/** The remedy {@code demo.management-own-event-loops}: the management server's probes answer. */
	@Test
	void managementServerOnItsOwnEventLoopAnswersWhileTheMainLoopsBlock() throws Exception {
		try (RunningService service = RunningService.start(Map.of("demo.mode", "blocking", "management.server.port", 0,
				"demo.management-own-event-loops", true))) {
			holdEveryEventLoop(service);
			List<ProbeResult> main = probe(service, "/livez");
			List<ProbeResult> management = new ArrayList<>();
			for (int i = 0; i < PROBES; i++) {
				management.add(RunningService.probe(service.managementUri("/actuator/health/liveness"), PROBE_TIMEOUT));
			}
			System.out.printf("blocking, management port on its own event loop: main /livez %s, management liveness %s%n",
					main, management);
			assertThat(main).allSatisfy((probe) -> assertThat(probe.timedOut()).isTrue());
			assertThat(management).allSatisfy((probe) -> assertThat(probe.status()).isEqualTo(200));
		}
	}

	/**
	 * 12 requests of 5 s on 4 event loops: every loop sleeps, with more queued behind it. The loop that
	 * accepts connections may fall asleep on its own request before it has accepted the others, so
	 * allow one latency for the rest to arrive.
	 */
	private static void holdEveryEventLoop(RunningService service) throws InterruptedException {
		service.sendSlow(12, "/api/work?latencyMs=5000");
		service.awaitInFlight(4, Duration.ofSeconds(15));
	}

	private static List<ProbeResult> probe(RunningService service, String path) throws Exception {
		List<ProbeResult> results = new ArrayList<>();
		for (int i = 0; i < PROBES; i++) {
			results.add(RunningService.probe(service.uri(path), PROBE_TIMEOUT));
		}
		return results;
	}

}
