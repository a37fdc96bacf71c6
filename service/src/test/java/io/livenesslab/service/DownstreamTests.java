package io.livenesslab.service;

import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With a downstream configured the wait is an HTTP call: blocking in the three blocking-style modes,
 * WebClient in reactive mode. The downstream is the same service in reactive mode, as in the chart.
 */
class DownstreamTests {

	private static ServiceProcess downstream;

	@BeforeAll
	static void startDownstream() throws Exception {
		downstream = ServiceProcess.start(Map.of("demo.mode", "reactive"));
	}

	@AfterAll
	static void stopDownstream() {
		downstream.close();
	}

	@ParameterizedTest
	@EnumSource(Mode.class)
	void waitIsACallToTheDownstreamWithTheRequestsLatency(Mode mode) throws Exception {
		try (RunningService service = RunningService.start(
				Map.of("demo.mode", mode.label(), "demo.downstream-url", downstream.uri("/api/work?latencyMs=9999").toString()))) {
			var response = RunningService.get(service.uri("/api/work?latencyMs=300"));
			assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
			assertThat(response.body()).contains("\"downstream\":true").contains("\"requestedMs\":300");
			assertThat(Integer.parseInt(response.body().replaceAll(".*\"waitedMs\":(\\d+).*", "$1"))).isGreaterThanOrEqualTo(300);
		}
	}

	@ParameterizedTest
	@EnumSource(Mode.class)
	void aFailingDownstreamIsA502Problem(Mode mode) throws Exception {
		// The downstream refuses latencies over its cap: its 400 becomes our 502.
		try (RunningService service = RunningService.start(Map.of("demo.mode", mode.label(), "demo.latency-max-ms", 120000,
				"demo.downstream-url", downstream.uri("/api/work").toString()))) {
			var response = RunningService.get(service.uri("/api/work?latencyMs=90000"));
			assertThat(response.statusCode()).isEqualTo(502);
			assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
					(type) -> assertThat(type).startsWith("application/problem+json"));
		}
	}

}
