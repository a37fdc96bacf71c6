package io.livenesslab.service;

import java.net.URI;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.netty.DisposableServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The benchmark's load generator ({@link OpenLoopClient}) against the floor: it sends at the rate asked
 * for, counts answers and errors, and measures each request from the time it was due, not from when a
 * connection was free to send it (no coordinated omission).
 */
class OpenLoopClientTests {

	private static DisposableServer floor;

	@BeforeAll
	static void startFloor() {
		floor = new FloorServer(5, 60000).start("127.0.0.1", 0);
	}

	@AfterAll
	static void stopFloor() {
		floor.disposeNow();
	}

	private static URI work(long latencyMs) {
		return URI.create("http://127.0.0.1:" + floor.port() + "/api/work?latencyMs=" + latencyMs);
	}

	@SuppressWarnings("unchecked")
	private static long latency(Map<String, Object> report, String which) {
		return ((Number) ((Map<String, Object>) report.get("latencies")).get(which)).longValue() / 1_000_000;
	}

	@Test
	void sendsEveryRequestOfTheRateAndCountsTheAnswers() throws Exception {
		Map<String, Object> report = OpenLoopClient.run(work(50), 200, 2, 5000, 400);
		assertThat(report).containsEntry("requests", 400L).containsEntry("success", 1.0);
		assertThat(report.get("status_codes")).isEqualTo(Map.of("200", 400L));
		assertThat(latency(report, "min")).isGreaterThanOrEqualTo(50L);
		// About 1.995 s from the first request due to the last.
		assertThat(((Number) report.get("duration")).longValue()).isBetween(1_990_000_000L, 2_000_000_000L);
	}

	@Test
	@SuppressWarnings("unchecked")
	void latencyRunsFromTheTimeARequestWasDueNotFromItsSend() throws Exception {
		// One connection, 100 ms answers, a request due every 20 ms: the k-th is sent when the one before it
		// is answered, about (k + 1) x 100 ms in, so it waited k x 80 ms for the connection. A client that
		// measured from the send would see 100 ms for all 50.
		Map<String, Object> report = OpenLoopClient.run(work(100), 50, 1, 30000, 1);
		assertThat(report).containsEntry("requests", 50L).containsEntry("success", 1.0);
		assertThat(latency(report, "min")).isBetween(100L, 400L);
		assertThat(latency(report, "50th")).isGreaterThan(1500L);
		assertThat(latency(report, "max")).isGreaterThan(3500L);
		assertThat(((Number) report.get("send_lag_max")).longValue() / 1_000_000).isGreaterThan(3000L);
		// The second half (the 25 due last) waited longest: its median is about 1 s above the whole run's.
		Map<String, Object> half = (Map<String, Object>) report.get("latencies_second_half");
		assertThat(((Number) half.get("count")).longValue()).isEqualTo(25L);
		assertThat(((Number) half.get("50th")).longValue() / 1_000_000).isGreaterThan(latency(report, "50th") + 500);
	}

	@Test
	void aRequestNotAnsweredInTimeIsAnError() throws Exception {
		Map<String, Object> report = OpenLoopClient.run(work(2000), 10, 1, 300, 20);
		assertThat(report).containsEntry("requests", 10L).containsEntry("success", 0.0);
		assertThat(report.get("status_codes")).isEqualTo(Map.of("0", 10L));
		assertThat(report.get("errors")).asList().containsExactly("timeout");
		assertThat(latency(report, "max")).isBetween(300L, 1000L);
	}

}
