package io.livenesslab.service;

import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.coyote.ProtocolHandler;
import org.apache.tomcat.util.threads.VirtualThreadExecutor;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.tomcat.TomcatWebServer;

import io.livenesslab.service.RunningService.ProbeResult;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * CPU-bound work on virtual threads starves their scheduler (spring-boot#48520). A virtual thread that
 * computes is not preempted: it holds its carrier until it parks, and the scheduler has as many carriers
 * as its parallelism (the processors, unless {@code -Djdk.virtualThreadScheduler.parallelism} says
 * otherwise; read here from {@code /actuator/info}). As many requests as there are carriers each compute
 * for 4 s ({@code demo.cpu-ms}, then no wait), longer than three probes of 1 s. In servlet-virtual Tomcat
 * serves the probe on a virtual thread as well, which finds no carrier, so liveness times out; in virtual
 * (WebFlux) only the work is on virtual threads, the probe is served by the event loop and boundedElastic,
 * and it answers. One round of work, not several: the scheduler's ForkJoinPool keeps no order across its
 * queues, so a probe queued behind several rounds could still run as soon as the first round ends.
 */
class CarrierStarvationTests {

	private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);

	private static final int PROBES = 3;

	/** The three probes' time, and a second to spare. */
	private static final long CPU_MS = 4000;

	private static final String WORK = "/api/work?latencyMs=0";

	private static final JsonMapper JSON = JsonMapper.builder().build();

	@Test
	void servletVirtualLivenessTimesOutWhileCpuBoundRequestsHoldEveryCarrier() throws Exception {
		try (RunningService service = RunningService.start(
				Map.of("demo.mode", "servlet-virtual", "demo.cpu-ms", CPU_MS))) {
			int carriers = holdEveryCarrier(service, service.uri("/livez"));
			List<ProbeResult> probes = probe(service.uri("/livez"));
			System.out.printf("servlet-virtual, %d requests computing %d ms on %d carriers: /livez %s%n", carriers,
					CPU_MS, carriers, probes);
			assertThat(probes).allSatisfy((probe) -> assertThat(probe.timedOut()).isTrue());
			assertAnsweredAndAliveAgain(service, service.uri("/livez"), "\"thread\":\"tomcat-handler-");
		}
	}

	/**
	 * A management port, which saves servlet's full pool (a second connector with threads of its own), does
	 * not save servlet-virtual: its connector runs on virtual threads too, on the same carriers. The child
	 * context of the management server registers Boot's {@code TomcatWebServerConfiguration} (the classes
	 * {@code TomcatServletManagementContextAutoConfiguration}'s {@code ManagementContextFactory} names), whose
	 * {@code tomcatVirtualThreadsProtocolHandlerCustomizer} is {@code @ConditionalOnThreading(VIRTUAL)},
	 * judged on the child's environment, which holds the parent's ({@code AbstractApplicationContext.setParent}
	 * merges it), {@code spring.threads.virtual.enabled=true} from {@link ModeStack} included.
	 */
	@Test
	void servletVirtualLivenessOnTheManagementPortTimesOutToo() throws Exception {
		try (RunningService service = RunningService.start(
				Map.of("demo.mode", "servlet-virtual", "demo.cpu-ms", CPU_MS, "management.server.port", 0))) {
			assertThat(protocolHandler(service, "main").getExecutor()).isInstanceOf(VirtualThreadExecutor.class);
			assertThat(protocolHandler(service, "management").getExecutor()).isInstanceOf(VirtualThreadExecutor.class);
			int carriers = holdEveryCarrier(service, service.managementUri("/actuator/health/liveness"));
			List<ProbeResult> probes = probe(service.managementUri("/actuator/health/liveness"));
			System.out.printf("servlet-virtual with a management port, %d requests computing %d ms on %d carriers: "
					+ "management liveness %s%n", carriers, CPU_MS, carriers, probes);
			assertThat(probes).allSatisfy((probe) -> assertThat(probe.timedOut()).isTrue());
			assertAnsweredAndAliveAgain(service, service.managementUri("/actuator/health/liveness"),
					"\"thread\":\"tomcat-handler-");
		}
	}

	/**
	 * The scheduler's own figures say every carrier computes, before the probes and after them: the probes
	 * were answered while no virtual thread could run. {@code /actuator/info} is answered on boundedElastic.
	 */
	@Test
	void virtualLivenessAnswersWhileCpuBoundRequestsHoldEveryCarrier() throws Exception {
		try (RunningService service = RunningService.start(Map.of("demo.mode", "virtual", "demo.cpu-ms", CPU_MS))) {
			int carriers = holdEveryCarrier(service, service.uri("/livez"), service.uri("/actuator/health/liveness"));
			// WebFlux counts a request in flight before its virtual thread starts: wait for the carriers to take them.
			long deadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
			while (virtualThreads(service).get("mounted") < carriers && System.nanoTime() < deadline) {
				Thread.sleep(20);
			}
			Map<String, Integer> before = virtualThreads(service);
			List<ProbeResult> livez = probe(service.uri("/livez"));
			List<ProbeResult> liveness = probe(service.uri("/actuator/health/liveness"));
			Map<String, Integer> after = virtualThreads(service);
			System.out.printf("virtual, %d requests computing %d ms on %d carriers: scheduler %s, /livez %s, "
					+ "liveness %s, then %s%n", carriers, CPU_MS, carriers, before, livez, liveness, after);
			assertThat(before).containsEntry("mounted", carriers);
			assertThat(livez).allSatisfy((probe) -> assertThat(probe.status()).isEqualTo(200));
			assertThat(liveness).allSatisfy((probe) -> assertThat(probe.status()).isEqualTo(200));
			assertThat(after).containsEntry("mounted", carriers);
			assertAnsweredAndAliveAgain(service, service.uri("/livez"), "\"thread\":\"virtual-");
		}
	}

	/**
	 * Sends one request per carrier and waits until the service serves them all. First each probe once:
	 * what the JVM does once (class loading, the first connection) is not judged.
	 * @return the carriers: the scheduler's parallelism
	 */
	private static int holdEveryCarrier(RunningService service, URI... probes) throws Exception {
		for (URI probe : probes) {
			assertThat(RunningService.probe(probe, Duration.ofSeconds(10)).status()).isEqualTo(200);
		}
		int carriers = virtualThreads(service).get("parallelism");
		service.sendSlow(carriers, WORK);
		service.awaitInFlight(carriers, Duration.ofSeconds(15));
		return carriers;
	}

	/**
	 * {@code process.virtualThreads} of {@code /actuator/info} (on the management port when there is one):
	 * the JDK's VirtualThreadSchedulerMXBean.
	 */
	@SuppressWarnings("unchecked")
	private static Map<String, Integer> virtualThreads(RunningService service) throws Exception {
		HttpResponse<String> info = RunningService.get(service.webServers().containsKey("management")
				? service.managementUri("/actuator/info") : service.uri("/actuator/info"));
		Map<String, Object> process = (Map<String, Object>) JSON.readValue(info.body(), Map.class).get("process");
		assertThat(process).as(info.body()).containsKey("virtualThreads");
		return (Map<String, Integer>) process.get("virtualThreads");
	}

	/** Nothing was broken but time: every request answered once it had computed, and the probe answers again. */
	private static void assertAnsweredAndAliveAgain(RunningService service, URI probe, String thread)
			throws Exception {
		assertThat(service.slowResponses()).allSatisfy((response) -> {
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.body()).contains(thread);
		});
		assertThat(RunningService.probe(probe, PROBE_TIMEOUT).status()).isEqualTo(200);
	}

	private static ProtocolHandler protocolHandler(RunningService service, String server) {
		return ((TomcatWebServer) service.webServers().get(server)).getTomcat().getConnector().getProtocolHandler();
	}

	private static List<ProbeResult> probe(URI uri) throws Exception {
		List<ProbeResult> results = new ArrayList<>();
		for (int i = 0; i < PROBES; i++) {
			results.add(RunningService.probe(uri, PROBE_TIMEOUT));
		}
		return results;
	}

}
