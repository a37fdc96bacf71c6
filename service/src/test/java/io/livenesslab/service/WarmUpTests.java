package io.livenesslab.service;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.livenesslab.service.RunningService.ProbeResult;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The warm-up's two places ({@link WarmUp}), probed as kubelet probes (a new connection, a 1 s timeout):
 * on the event loops, the storm of rwlove/home-ops#13395, liveness goes unanswered from the moment the
 * application is ready until the warm-up ends; before readiness, the remedy, liveness answers throughout
 * and readiness says 503 until the warm-up ends, on either stack. Each test sleeps through one warm-up of
 * 4 s, and ends with the event loops, which every service in this JVM shares, free again.
 */
class WarmUpTests {

	private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);

	private static final Duration WARM_UP = Duration.ofSeconds(4);

	/** {@code demo.warm-up} alone: the default place is the event loops, so this is the published storm. */
	@Test
	void onTheEventLoopsLivenessGoesUnansweredUntilTheWarmUpEnds() throws Exception {
		try (RunningService service = RunningService.start(Map.of("demo.mode", "reactive", "demo.warm-up", "4s"))) {
			// run() has returned: ApplicationReadyEvent has been published, and with it the loops' warm-up began.
			long ready = System.nanoTime();
			List<ProbeResult> during = new ArrayList<>();
			during.add(RunningService.probe(service.uri("/livez"), PROBE_TIMEOUT));
			during.add(RunningService.probe(service.uri("/livez"), PROBE_TIMEOUT));
			Duration probed = Duration.ofNanos(System.nanoTime() - ready);
			Duration rest = WARM_UP.minus(probed).plusMillis(500);
			Thread.sleep(rest.isNegative() ? Duration.ZERO : rest);
			ProbeResult after = RunningService.probe(service.uri("/livez"), PROBE_TIMEOUT);
			System.out.printf("warm-up of %s on the event loops: /livez during it %s, after it %s%n", WARM_UP, during, after);
			assertThat(probed).as("both probes ended within the warm-up").isLessThan(WARM_UP);
			assertThat(during).allSatisfy((probe) -> assertThat(probe.timedOut()).isTrue());
			assertThat(after.status()).isEqualTo(200);
		}
	}

	/**
	 * The service starts on another thread, because {@code SpringApplication.run} returns only after its
	 * runners, the warm-up among them. Once {@code /livez} answers 200 (LivenessState.CORRECT, published
	 * before the runners), the probes are made while {@code run()} has not returned.
	 */
	@ParameterizedTest(name = "{0} mode: before readiness, /readyz 503 and /livez 200 until the warm-up ends")
	@ValueSource(strings = { "reactive", "servlet" })
	void beforeReadinessLivenessAnswersAndReadinessRefusesUntilTheWarmUpEnds(String mode) throws Exception {
		int port = freePort();
		CompletableFuture<RunningService> starting = CompletableFuture.supplyAsync(() -> RunningService
			.start(Map.of("demo.mode", mode, "demo.warm-up", "4s", "demo.warm-up-on", "startup", "server.port", port)));
		URI livez = URI.create("http://127.0.0.1:" + port + "/livez");
		URI readyz = URI.create("http://127.0.0.1:" + port + "/readyz");
		try {
			awaitLive(livez, starting);
			ProbeResult readiness = RunningService.probe(readyz, PROBE_TIMEOUT);
			ProbeResult liveness = RunningService.probe(livez, PROBE_TIMEOUT);
			boolean stillStarting = !starting.isDone();
			starting.join();
			ProbeResult readinessAfter = RunningService.probe(readyz, PROBE_TIMEOUT);
			System.out.printf("%s, warm-up of %s before readiness: /readyz %s and /livez %s during it, /readyz %s after it%n",
					mode, WARM_UP, readiness, liveness, readinessAfter);
			assertThat(stillStarting).as("the probes were made before run() returned, during the warm-up").isTrue();
			assertThat(readiness.status()).isEqualTo(503);
			assertThat(liveness.status()).isEqualTo(200);
			assertThat(readinessAfter.status()).isEqualTo(200);
		}
		finally {
			starting.join().close();
		}
	}

	/** Polls liveness, as a startup probe would, until it answers 200. */
	private static void awaitLive(URI livez, CompletableFuture<RunningService> starting) throws Exception {
		long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
		while (System.nanoTime() < deadline && !starting.isCompletedExceptionally()) {
			try {
				if (RunningService.probe(livez, PROBE_TIMEOUT).status() == 200) {
					return;
				}
			}
			catch (IOException ex) {
				// not listening yet
			}
			Thread.sleep(50);
		}
		starting.join();
		throw new AssertionError("/livez never answered 200");
	}

	private static int freePort() throws Exception {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
