package io.livenesslab.service;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What start-up accepts and refuses, and what a user finds on a started service. */
class StartupTests {

	@Test
	void unknownModeStopsStartUpListingTheValidModes() {
		assertThatThrownBy(() -> RunningService.start(Map.of("demo.mode", "turbo")))
			.rootCause()
			.hasMessageContaining("unknown demo.mode (APP_MODE) 'turbo'")
			.hasMessageContaining("blocking, reactive, offloaded, virtual");
	}

	@Test
	void latencyOverTheCapStopsStartUp() {
		assertThatThrownBy(() -> RunningService.start(Map.of("demo.latency-ms", 70000, "demo.latency-max-ms", 60000)))
			.rootCause()
			.hasMessageContaining("demo.latency-ms must be between 0 and demo.latency-max-ms (60000)");
	}

	@ParameterizedTest(name = "demo.cpu-ms={0} stops start-up")
	@ValueSource(longs = { -1, 60001 })
	void cpuWorkOutsideZeroToTheCapStopsStartUp(long cpuMs) {
		assertThatThrownBy(() -> RunningService.start(Map.of("demo.cpu-ms", cpuMs, "demo.latency-max-ms", 60000)))
			.rootCause()
			.hasMessageContaining("demo.cpu-ms must be between 0 and demo.latency-max-ms (60000), got " + cpuMs);
	}

	@Test
	void negativeCapOnRequestsInFlightStopsStartUp() {
		assertThatThrownBy(() -> RunningService.start(Map.of("demo.max-in-flight", -1)))
			.rootCause()
			.hasMessageContaining("demo.max-in-flight must be >= 0 (0: no cap), got -1");
	}

	@Test
	void negativeWarmUpStopsStartUp() {
		assertThatThrownBy(() -> RunningService.start(Map.of("demo.warm-up", "-1s")))
			.rootCause()
			.hasMessageContaining("demo.warm-up (DEMO_WARM_UP) must be >= 0 (0s: none), got PT-1S");
	}

	@Test
	void unknownWarmUpPlaceStopsStartUpListingTheValidOnes() {
		assertThatThrownBy(() -> RunningService.start(Map.of("demo.warm-up", "4s", "demo.warm-up-on", "later")))
			.rootCause()
			.hasMessageContaining("unknown demo.warm-up-on (DEMO_WARM_UP_ON) 'later': valid values are event-loop, startup");
	}

	@Test
	void modeIsCaseInsensitiveAndReported() throws Exception {
		try (RunningService service = RunningService.start(Map.of("demo.mode", "Offloaded"))) {
			String body = RunningService.get(service.uri("/api/work?latencyMs=1")).body();
			assertThat(body).contains("\"mode\":\"offloaded\"").contains("\"thread\":\"boundedElastic-");
			assertThat(RunningService.get(service.uri("/actuator/info")).body()).contains("\"mode\":\"offloaded\"");
		}
	}

	@Test
	void virtualModeRunsTheBlockingCallOnAVirtualThread() throws Exception {
		try (RunningService service = RunningService.start(Mode.VIRTUAL)) {
			assertThat(RunningService.get(service.uri("/api/work?latencyMs=1")).body()).contains("\"thread\":\"virtual-");
		}
	}

	@Test
	void servesProbesMetricsAndTheApiContractButNothingElseOfActuator() throws Exception {
		try (RunningService service = RunningService.start(Mode.REACTIVE)) {
			assertThat(RunningService.get(service.uri("/api/work?latencyMs=1")).statusCode()).isEqualTo(200);
			for (String path : new String[] { "/livez", "/readyz", "/actuator/health/liveness", "/actuator/health/readiness" }) {
				assertThat(RunningService.get(service.uri(path)).body()).as(path).contains("\"status\":\"UP\"");
			}
			assertThat(RunningService.get(service.uri("/actuator/prometheus")).body())
				.contains("demo_requests_in_flight{")
				.contains("demo_work_latency_seconds_bucket{")
				.contains("reactor_netty_eventloop_pending_tasks{")
				// Boot's own per-request observation, by route; Reactor Netty's per-request meters stay off.
				.containsPattern("http_server_requests_seconds_count\\{[^}]*uri=\"/api/work\"")
				.doesNotContain("reactor_netty_http_server_data_sent")
				.doesNotContain("latencyMs=");
			assertThat(RunningService.get(service.uri("/v3/api-docs")).body())
				.contains("\"/api/work\"").contains("\"latencyMs\"").contains("\"mix\"");
			assertThat(RunningService.get(service.uri("/actuator/env")).statusCode()).isEqualTo(404);
		}
	}

}
