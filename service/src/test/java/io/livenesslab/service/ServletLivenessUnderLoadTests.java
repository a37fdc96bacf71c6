package io.livenesslab.service;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;

import io.livenesslab.service.RunningService.ProbeResult;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lesson on Tomcat, on a real server whose pool is cut to 2 threads ({@code server.tomcat.threads.max=2},
 * so that a few slow requests fill it as 200 fill Boot's default): 20 requests of 8 s, ten times the
 * threads, then liveness probed as kubelet probes it (a new connection, a 1 s timeout), 3 times. In
 * servlet mode every thread sleeps and the probe waits in Tomcat's queue behind the other requests until it
 * times out; servlet-async releases each thread while its request waits and servlet-virtual waits on
 * virtual threads, so under the same load the probe is answered. Tomcat accepts the probe's connection in
 * every mode: what it waits for is a thread.
 */
class ServletLivenessUnderLoadTests {

	private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);

	private static final int PROBES = 3;

	private static final int THREADS = 2;

	private static final int SLOW = 20;

	private static final String SLOW_REQUEST = "/api/work?latencyMs=8000";

	private static final String TOMCAT = "server.tomcat.threads.max=" + THREADS;

	@Nested
	@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = { "demo.mode=servlet", TOMCAT })
	@DirtiesContext
	class Servlet extends UnderLoad {

		@Test
		void livenessTimesOutWhileSlowRequestsHoldEveryTomcatThread() throws Exception {
			sendSlow(SLOW);
			awaitInFlight(THREADS);
			List<ProbeResult> probes = probe(uri("/livez"));
			report("servlet", probes);
			assertThat(probes).allSatisfy((probe) -> assertThat(probe.timedOut()).isTrue());
			assertThat(inFlight()).as("no more than the pool's threads at once").isEqualTo(THREADS);
		}

	}

	@Nested
	@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = { "demo.mode=servlet-async", TOMCAT })
	@DirtiesContext
	class ServletAsync extends UnderLoad {

		@Test
		void livenessAnswersWhileSlowRequestsWaitWithoutAThread() throws Exception {
			assertLivenessAnswersUnderLoad("servlet-async");
		}

	}

	@Nested
	@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = { "demo.mode=servlet-virtual", TOMCAT })
	@DirtiesContext
	class ServletVirtual extends UnderLoad {

		@Test
		void livenessAnswersWhileSlowRequestsWaitOnVirtualThreads() throws Exception {
			assertLivenessAnswersUnderLoad("servlet-virtual");
		}

	}

	/**
	 * On Tomcat the management server is a second connector with a pool of its own (on Reactor Netty it
	 * shares the event loops): with the main pool full, liveness on the management port answers while
	 * {@code /livez} on the main port times out. The chart's probes must then target the management port.
	 */
	@Nested
	@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { "demo.mode=servlet", TOMCAT, "management.server.port=0" })
	@DirtiesContext
	class ServletWithAManagementPort extends UnderLoad {

		@LocalManagementPort
		int managementPort;

		@Test
		void livenessOnTheManagementPortAnswersWhileTheMainPoolIsFull() throws Exception {
			sendSlow(SLOW);
			awaitInFlight(THREADS);
			List<ProbeResult> main = probe(uri("/livez"));
			List<ProbeResult> management = probe(
					URI.create("http://127.0.0.1:" + this.managementPort + "/actuator/health/liveness"));
			System.out.printf("servlet with a management port, main pool full: main /livez %s, management liveness %s%n",
					main, management);
			assertThat(main).allSatisfy((probe) -> assertThat(probe.timedOut()).isTrue());
			assertThat(management).allSatisfy((probe) -> assertThat(probe.status()).isEqualTo(200));
		}

	}

	/**
	 * Load shedding ({@code demo.max-in-flight}) below the pool's threads: the requests over the cap are
	 * answered 429 at once, so the pool keeps a thread for the probe.
	 */
	@Nested
	@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { "demo.mode=servlet", TOMCAT, "demo.max-in-flight=1" })
	@DirtiesContext
	class ServletWithACapBelowItsThreads extends UnderLoad {

		@Test
		void shedsTheRestAndStaysAlive() throws Exception {
			sendSlow(SLOW);
			awaitInFlight(1);
			HttpResponse<String> shed = RunningService.get(uri(SLOW_REQUEST));
			assertThat(shed.statusCode()).isEqualTo(429);
			assertThat(shed.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			assertThat(shed.headers().firstValue("Retry-After")).hasValue("1");
			assertThat(shed.body()).contains("\"maxInFlight\":1");
			List<ProbeResult> probes = probe(uri("/livez"));
			report("servlet, at most 1 in flight", probes);
			assertThat(probes).allSatisfy((probe) -> assertThat(probe.status()).isEqualTo(200));
			assertThat(inFlight()).as("the shed requests never counted").isEqualTo(1);
		}

	}

	/** A service on a random port, slow requests sent to it and left in flight, and probes. */
	abstract static class UnderLoad {

		@LocalServerPort
		int port;

		@Autowired
		MeterRegistry registry;

		private final HttpClient load = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

		/** A first probe before the load: what the JVM does once (class loading, the first connection) is not judged. */
		@BeforeEach
		void warmUp() throws Exception {
			assertThat(RunningService.probe(uri("/livez"), Duration.ofSeconds(10)).status()).isEqualTo(200);
		}

		@AfterEach
		void stopLoad() {
			this.load.shutdownNow();
		}

		URI uri(String pathAndQuery) {
			return URI.create("http://127.0.0.1:" + this.port + pathAndQuery);
		}

		/** Sends COUNT slow requests, each on a connection of its own, and leaves them in flight. */
		void sendSlow(int count) {
			for (int i = 0; i < count; i++) {
				this.load.sendAsync(HttpRequest.newBuilder(uri(SLOW_REQUEST)).timeout(Duration.ofMinutes(2)).build(),
						HttpResponse.BodyHandlers.discarding());
			}
		}

		int inFlight() {
			return (int) this.registry.get("demo.requests.in.flight").gauge().value();
		}

		void awaitInFlight(int count) throws InterruptedException {
			long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
			while (inFlight() < count) {
				if (System.nanoTime() > deadline) {
					throw new AssertionError("only " + inFlight() + " of " + count + " requests in flight after 30 s");
				}
				Thread.sleep(20);
			}
		}

		List<ProbeResult> probe(URI uri) throws Exception {
			List<ProbeResult> results = new ArrayList<>();
			for (int i = 0; i < PROBES; i++) {
				results.add(RunningService.probe(uri, PROBE_TIMEOUT));
			}
			return results;
		}

		void report(String what, List<ProbeResult> probes) {
			System.out.printf("%s, %d in flight on %d Tomcat threads (%d sent): /livez %s%n", what, inFlight(), THREADS,
					SLOW, probes);
		}

		/** Every request in flight at once, and liveness answered (kubelet's judgement: a 200 within 1 s). */
		void assertLivenessAnswersUnderLoad(String mode) throws Exception {
			sendSlow(SLOW);
			awaitInFlight(SLOW);
			List<ProbeResult> probes = probe(uri("/livez"));
			report(mode, probes);
			assertThat(probes).allSatisfy((probe) -> assertThat(probe.status()).isEqualTo(200));
			assertThat(probe(uri("/actuator/health/liveness"))).allSatisfy((probe) -> assertThat(probe.status()).isEqualTo(200));
		}

	}

}
