package io.livenesslab.service;

import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * BlockHound watches every non-blocking thread (the Reactor Netty event loops among them) and reports
 * each blocking call made on one. Reactive mode must make none; blocking mode is caught at once.
 */
class BlockHoundTests {

	private static final List<String> blockingCalls = new CopyOnWriteArrayList<>();

	@BeforeAll
	static void installBlockHound() {
		// Record rather than throw, so blocking mode still answers and the test can read the report.
		// The Reactor and Netty integrations bring their allowances for short internal locks (a
		// scheduler queue's offer may park for an instant under contention: that is not the code under
		// test blocking). Netty's AdaptivePoolingAllocator takes a lock of its own when it grows its
		// magazines, which its integration does not list yet. The threads judged are the event loops,
		// named here, because they are what the probes need free (with BlockHound 1.0.17 on JDK 25 the
		// integrations do not mark them).
		BlockHound.Builder builder = BlockHound.builder();
		ServiceLoader.load(BlockHoundIntegration.class).forEach(builder::with);
		builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
			.nonBlockingThreadPredicate((current) -> BlockHoundTests::nonBlocking)
			.blockingMethodCallback((method) -> blockingCalls.add(method + " on " + Thread.currentThread().getName() + where()))
			.install();
	}

	private static boolean nonBlocking(Thread thread) {
		return thread.getName().startsWith("reactor-http-");
	}

	/** The first frames below BlockHound's own, so that a report says where the call was made. */
	private static String where() {
		return StackWalker.getInstance()
			.walk((frames) -> frames.map(StackWalker.StackFrame::toString)
				.filter((frame) -> !frame.startsWith("reactor.blockhound") && !frame.contains("BlockHoundTests"))
				.limit(12)
				.collect(Collectors.joining("\n  at ", "\n  at ", "")));
	}

	@BeforeEach
	void forgetEarlierCalls() {
		blockingCalls.clear();
	}

	@Test
	void reactiveModeServesRequestsWithoutOneBlockingCall() throws Exception {
		try (RunningService service = RunningService.start(Mode.REACTIVE)) {
			blockingCalls.clear(); // start-up is not what is judged here
			service.sendSlow(50, "/api/work?latencyMs=200");
			service.sendSlow(50, "/api/work?mix=10:50,300:50");
			assertThat(service.slowResponses()).allSatisfy((response) -> assertThat(response.statusCode()).isEqualTo(200));
			assertThat(RunningService.get(service.uri("/livez")).statusCode()).isEqualTo(200);
			assertThat(blockingCalls).isEmpty();
		}
	}

	@Test
	void blockingModeIsCaughtSleepingOnTheEventLoop() throws Exception {
		try (RunningService service = RunningService.start(Mode.BLOCKING)) {
			blockingCalls.clear();
			assertThat(RunningService.get(service.uri("/api/work?latencyMs=50")).statusCode()).isEqualTo(200);
			assertThat(blockingCalls).anySatisfy((call) -> assertThat(call).contains("java.lang.Thread.sleep")
				.contains("on reactor-http-"));
		}
	}

}
