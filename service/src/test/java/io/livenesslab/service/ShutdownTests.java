package io.livenesslab.service;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;

import static org.assertj.core.api.Assertions.assertThat;

/** Graceful shutdown: readiness goes DOWN first, then requests in flight finish before the server stops. */
class ShutdownTests {

	@Test
	void readinessGoesDownFirstAndInFlightRequestsFinish() throws Exception {
		List<ReadinessState> states = new CopyOnWriteArrayList<>();
		try (RunningService service = RunningService.start(Map.of("demo.mode", "reactive", "server.shutdown", "graceful"))) {
			service.context().addApplicationListener((AvailabilityChangeEvent<?> event) -> {
				if (event.getState() instanceof ReadinessState state) {
					states.add(state);
				}
			});
			service.sendSlow(5, "/api/work?latencyMs=1500");
			service.awaitInFlight(5, Duration.ofSeconds(10));
			CompletableFuture<List<HttpResponse<String>>> answers = CompletableFuture.supplyAsync(service::slowResponses);
			service.context().close();
			assertThat(states).containsExactly(ReadinessState.REFUSING_TRAFFIC);
			assertThat(answers.get()).allSatisfy((response) -> assertThat(response.statusCode()).isEqualTo(200));
		}
	}

}
