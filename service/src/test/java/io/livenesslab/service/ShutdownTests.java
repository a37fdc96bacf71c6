package io.livenesslab.service;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Graceful shutdown, on Reactor Netty and on Tomcat: readiness goes DOWN first, then the drain tells every
 * keep-alive client to close ({@link ConnectionDrain}: a WebFilter, on Tomcat a servlet filter), then
 * requests in flight finish before the server stops. servlet-async's answers are written on an async
 * dispatch of their own, and get the header there.
 */
class ShutdownTests {

	@ParameterizedTest
	@ValueSource(strings = { "reactive", "servlet", "servlet-async", "servlet-virtual" })
	void readinessGoesDownFirstAndInFlightRequestsFinish(String mode) throws Exception {
		List<ReadinessState> states = new CopyOnWriteArrayList<>();
		try (RunningService service = RunningService.start(Map.of("demo.mode", mode, "server.shutdown", "graceful"))) {
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

	/**
	 * Clients that never retry, each on one keep-alive connection, pausing between requests as paced
	 * users do: the pause is when the web server's graceful shutdown closes an idle connection without a
	 * word, and the client's next request then meets a closed connection. With the drain each gets an
	 * answer that says {@code Connection: close} first. Without it (demo.drain=0s) each of the 20 lost
	 * a request here, in every mode.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "reactive", "servlet", "servlet-async", "servlet-virtual" })
	void everyKeepAliveClientGetsFullAnswersAndIsClosedOnlyAfterAnAnswerSayingConnectionClose(String mode)
			throws Exception {
		int connections = 20;
		try (RunningService service = RunningService.start(
				Map.of("demo.mode", mode, "server.shutdown", "graceful", "demo.drain", "2s"));
				ExecutorService threads = Executors.newFixedThreadPool(connections)) {
			int port = service.uri("/").getPort();
			List<KeepAliveClient> clients = new ArrayList<>();
			List<Future<KeepAliveClient.Outcome>> outcomes = new ArrayList<>();
			for (int i = 0; i < connections; i++) {
				KeepAliveClient client = new KeepAliveClient(port, "/api/work?latencyMs=300", Duration.ofMillis(200));
				clients.add(client);
				outcomes.add(threads.submit(client));
			}
			awaitAnswers(clients, 2, Duration.ofSeconds(20));
			service.context().close();
			List<KeepAliveClient.Outcome> ended = new ArrayList<>();
			for (Future<KeepAliveClient.Outcome> outcome : outcomes) {
				ended.add(outcome.get(30, TimeUnit.SECONDS));
			}
			assertThat(ended).as("how each connection ended").allSatisfy((outcome) -> {
				assertThat(outcome.ending()).isEqualTo(KeepAliveClient.Ending.CLOSED_AFTER_CONNECTION_CLOSE);
				assertThat(outcome.non200()).isZero();
			});
		}
	}

	/**
	 * A request longer than the drain, in flight when it begins: its answer, written after the drain, still
	 * says {@code Connection: close} (set when its body is written, or on servlet-async's dispatch).
	 */
	@ParameterizedTest
	@ValueSource(strings = { "servlet", "servlet-async" })
	void aRequestInFlightWhenTheDrainBeginsIsToldToCloseWithItsAnswer(String mode) throws Exception {
		try (RunningService service = RunningService.start(
				Map.of("demo.mode", mode, "server.shutdown", "graceful", "demo.drain", "1s"))) {
			int port = service.uri("/").getPort();
			CompletableFuture<KeepAliveClient.Outcome> outcome = CompletableFuture
				.supplyAsync(() -> call(new KeepAliveClient(port, "/api/work?latencyMs=2500", Duration.ofMillis(200))));
			service.awaitInFlight(1, Duration.ofSeconds(10));
			service.context().close();
			assertThat(outcome.get(30, TimeUnit.SECONDS))
				.isEqualTo(new KeepAliveClient.Outcome(KeepAliveClient.Ending.CLOSED_AFTER_CONNECTION_CLOSE, 1, 0, null));
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "reactive", "servlet" })
	void aNewConnectionDuringTheDrainIsServedAndToldToClose(String mode) throws Exception {
		try (RunningService service = RunningService.start(
				Map.of("demo.mode", mode, "server.shutdown", "graceful", "demo.drain", "2s"))) {
			ConnectionDrain drain = service.context().getBean(ConnectionDrain.class);
			int port = service.uri("/").getPort();
			CompletableFuture<Void> closed = CompletableFuture.runAsync(service.context()::close);
			long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			while (!drain.draining() && System.nanoTime() < deadline) {
				Thread.sleep(10);
			}
			assertThat(drain.draining()).as("draining").isTrue();
			KeepAliveClient.Outcome outcome = new KeepAliveClient(port, "/api/work?latencyMs=10", Duration.ZERO).call();
			assertThat(outcome).isEqualTo(new KeepAliveClient.Outcome(KeepAliveClient.Ending.CLOSED_AFTER_CONNECTION_CLOSE, 1, 0, null));
			assertThat(closed).as("still draining").isNotDone();
			closed.get(30, TimeUnit.SECONDS);
		}
	}

	private static KeepAliveClient.Outcome call(KeepAliveClient client) {
		try {
			return client.call();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static void awaitAnswers(List<KeepAliveClient> clients, int each, Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (clients.stream().anyMatch((client) -> client.answers() < each)) {
			if (System.nanoTime() > deadline) {
				throw new AssertionError("not every client had " + each + " answers after " + timeout);
			}
			Thread.sleep(20);
		}
	}

}
