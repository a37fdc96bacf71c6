package io.livenesslab.service;

import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.livenesslab.service.RunningService.ProbeResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The downstream health indicator (demo.downstream-health) where people put it, in the liveness group, and
 * where it belongs, in the readiness group; and the downstream's slow API (demo.api-delay). Probes are made
 * as the kubelet makes them: a fresh connection, a 1 s timeout. The downstream is the service in reactive
 * mode in a JVM of its own, as in the chart; "down" is a port nothing listens on. In reactive and
 * servlet-async the check shares the requests' connection pool, so slow requests can run it dry under a
 * downstream that answers (demo.downstream-max-connections=2).
 */
class DownstreamHealthTests {

	private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);

	private static final String LIVENESS = "management.endpoint.health.group.liveness.include";

	private static final String READINESS = "management.endpoint.health.group.readiness.include";

	/** The pool of the pool-run-dry tests: two connections, so that a few slow requests hold them all. */
	private static final int CONNECTIONS = 2;

	/** Three times the connections: the pool's queue holds four requests ahead of any health check. */
	private static final int SLOW_REQUESTS = 6;

	private static final String SLOW_REQUEST = "/api/work?latencyMs=2000";

	private static ServiceProcess downstream;

	private static ServiceProcess slowDownstream;

	@BeforeAll
	static void startDownstreams() throws Exception {
		downstream = ServiceProcess.start(Map.of("demo.mode", "reactive"));
		slowDownstream = ServiceProcess.start(Map.of("demo.mode", "reactive", "demo.api-delay", "3s"));
	}

	@AfterAll
	static void stopDownstreams() {
		for (ServiceProcess process : new ServiceProcess[] { downstream, slowDownstream }) {
			if (process != null) {
				process.close();
			}
		}
	}

	private static RunningService start(Mode mode, URI downstreamUrl, String group) {
		return start(mode, downstreamUrl, group, Map.of());
	}

	private static RunningService start(Mode mode, URI downstreamUrl, String group, Map<String, Object> more) {
		Map<String, Object> properties = new HashMap<>(Map.of("demo.mode", mode.label(), "demo.downstream-health", true,
				"demo.downstream-url", downstreamUrl.toString()));
		if (group != null) {
			properties.put(group, group.equals(LIVENESS) ? "livenessState,downstream" : "readinessState,downstream");
		}
		properties.putAll(more);
		return RunningService.start(properties);
	}

	/** The downstream that answers, through a pool of {@link #CONNECTIONS} connections. */
	private static RunningService startWithASmallPool(Mode mode, String group) {
		return start(mode, downstream.uri("/api/work"), group,
				Map.of("demo.downstream-max-connections", CONNECTIONS));
	}

	/**
	 * Puts {@link #SLOW_REQUESTS} requests in flight, each holding a connection of the pool for its 2 s
	 * while it has one: the pool runs dry, and the ones without a connection wait in its queue.
	 */
	private static void runThePoolDry(RunningService service) throws InterruptedException {
		service.sendSlow(SLOW_REQUESTS, SLOW_REQUEST);
		service.awaitInFlight(SLOW_REQUESTS, Duration.ofSeconds(5));
	}

	/** A first health check loads the HTTP client's classes and may take over a second in a fresh JVM. */
	private static void warmUp(RunningService service) throws Exception {
		RunningService.get(service.uri("/actuator/health"));
	}

	private static URI nothingListens() throws Exception {
		try (ServerSocket socket = new ServerSocket(0)) {
			return URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/api/work");
		}
	}

	@ParameterizedTest
	@EnumSource(Mode.class)
	void inTheLivenessGroupADownstreamOutageFailsLivenessInEveryMode(Mode mode) throws Exception {
		try (RunningService service = start(mode, nothingListens(), LIVENESS)) {
			warmUp(service);
			ProbeResult liveness = RunningService.probe(service.uri("/livez"), PROBE_TIMEOUT);
			assertThat(liveness.status()).as("liveness while the downstream is down").isEqualTo(503);
			assertThat(RunningService.probe(service.uri("/readyz"), PROBE_TIMEOUT).status()).isEqualTo(200);
		}
	}

	@Test
	void inTheLivenessGroupADownstreamThatAnswersKeepsLivenessUp() throws Exception {
		try (RunningService service = start(Mode.REACTIVE, downstream.uri("/api/work"), LIVENESS)) {
			warmUp(service);
			assertThat(RunningService.probe(service.uri("/livez"), PROBE_TIMEOUT).status()).isEqualTo(200);
		}
	}

	@Test
	void inTheLivenessGroupASlowDownstreamTimesTheLivenessProbeOut() throws Exception {
		try (RunningService service = start(Mode.REACTIVE, slowDownstream.uri("/api/work"), LIVENESS)) {
			ProbeResult liveness = RunningService.probe(service.uri("/livez"), PROBE_TIMEOUT);
			assertThat(liveness.timedOut()).as("liveness behind a 3 s downstream, in %s", liveness.took()).isTrue();
		}
	}

	/**
	 * magfest/ubersystem#4600 in one pod: the check goes through the requests' own client, so their pool,
	 * and waits behind them once slow requests hold every connection. Before the load it answers at once.
	 */
	@ParameterizedTest
	@EnumSource(names = { "REACTIVE", "SERVLET_ASYNC" })
	void inTheLivenessGroupAPoolRunDryBySlowRequestsTimesTheLivenessProbeOut(Mode mode) throws Exception {
		try (RunningService service = startWithASmallPool(mode, LIVENESS)) {
			warmUp(service);
			assertThat(RunningService.probe(service.uri("/livez"), PROBE_TIMEOUT).status()).as("liveness before the load")
				.isEqualTo(200);
			runThePoolDry(service);
			ProbeResult liveness = RunningService.probe(service.uri("/livez"), PROBE_TIMEOUT);
			assertThat(liveness.timedOut())
				.as("liveness with %d slow requests on %d connections, in %s", SLOW_REQUESTS, CONNECTIONS, liveness.took())
				.isTrue();
		}
	}

	/**
	 * The remedy: out of the liveness group the same pool run dry leaves liveness up, while the check
	 * itself, in {@code /actuator/health}, waits behind the requests all the same.
	 */
	@ParameterizedTest
	@EnumSource(names = { "REACTIVE", "SERVLET_ASYNC" })
	void outOfTheLivenessGroupAPoolRunDryLeavesLivenessUp(Mode mode) throws Exception {
		try (RunningService service = startWithASmallPool(mode, null)) {
			warmUp(service);
			runThePoolDry(service);
			ProbeResult liveness = RunningService.probe(service.uri("/livez"), PROBE_TIMEOUT);
			assertThat(liveness.status()).as("liveness in %s", liveness.took()).isEqualTo(200);
			ProbeResult health = RunningService.probe(service.uri("/actuator/health"), PROBE_TIMEOUT);
			assertThat(health.timedOut()).as("the downstream's check behind the requests, in %s", health.took()).isTrue();
		}
	}

	@Test
	void inTheReadinessGroupAnOutageTakesThePodOutOfItsServiceAndLivenessStaysUp() throws Exception {
		try (RunningService service = start(Mode.REACTIVE, nothingListens(), READINESS)) {
			warmUp(service);
			assertThat(RunningService.probe(service.uri("/readyz"), PROBE_TIMEOUT).status()).isEqualTo(503);
			assertThat(RunningService.probe(service.uri("/livez"), PROBE_TIMEOUT).status()).isEqualTo(200);
		}
	}

	@Test
	void inNoGroupTheIndicatorChangesNoProbe() throws Exception {
		try (RunningService service = start(Mode.REACTIVE, nothingListens(), null)) {
			warmUp(service);
			assertThat(RunningService.probe(service.uri("/livez"), PROBE_TIMEOUT).status()).isEqualTo(200);
			assertThat(RunningService.probe(service.uri("/readyz"), PROBE_TIMEOUT).status()).isEqualTo(200);
			assertThat(RunningService.get(service.uri("/actuator/health")).statusCode()).isEqualTo(503);
		}
	}

	@Test
	void withoutADownstreamUrlTheServiceRefusesToStartSayingWhatIsMissing() {
		assertThatThrownBy(() -> RunningService.start(Map.of("demo.downstream-health", true))).rootCause()
			.hasMessageContaining("set demo.downstream-url (DEMO_DOWNSTREAM_URL) too");
	}

	@Test
	void theSlowApiWaitsWhileItsOwnProbesAnswerAtOnce() throws Exception {
		long started = System.nanoTime();
		var answer = RunningService.get(slowDownstream.uri("/api/work?latencyMs=0"));
		Duration took = Duration.ofNanos(System.nanoTime() - started);
		assertThat(answer.statusCode()).isEqualTo(200);
		assertThat(took).isGreaterThanOrEqualTo(Duration.ofSeconds(3));
		ProbeResult liveness = RunningService.probe(slowDownstream.uri("/livez"), PROBE_TIMEOUT);
		assertThat(liveness.status()).isEqualTo(200);
		assertThat(liveness.took()).isLessThan(Duration.ofMillis(500));
	}

}
