package io.livenesslab.service;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.netty.channel.DefaultEventLoop;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive wait ({@link LoopTimer}): it ends on the event loop it was scheduled on, after its latency,
 * and a wait whose request went away (a client that gave up) leaves no task on the loop behind it: with
 * thousands of requests in flight, each would hold its answer's objects until its time came.
 */
class LoopTimerTests {

	/** An event loop that says whether a scheduled task is still waiting on it. */
	static final class Loop extends DefaultEventLoop {

		boolean waiting() throws Exception {
			return submit(() -> nextScheduledTaskNano() != -1).get(5, TimeUnit.SECONDS);
		}

	}

	private final Loop loop = new Loop();

	@AfterEach
	void stop() {
		this.loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
	}

	@Test
	void theWaitEndsOnItsLoopAfterItsLatency() {
		long started = System.nanoTime();
		Thread ended = LoopTimer.after(Duration.ofMillis(200), this.loop, "x")
			.map((value) -> Thread.currentThread())
			.block(Duration.ofSeconds(5));
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
		assertThat(this.loop.inEventLoop(ended)).isTrue();
	}

	@Test
	void aCancelledWaitLeavesNoTaskOnTheLoop() throws Exception {
		CountDownLatch emitted = new CountDownLatch(1);
		Disposable wait = LoopTimer.after(Duration.ofSeconds(30), this.loop, "x").subscribe((value) -> emitted.countDown());
		assertThat(this.loop.waiting()).isTrue();
		wait.dispose();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		while (this.loop.waiting() && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(this.loop.waiting()).isFalse();
		assertThat(emitted.getCount()).isEqualTo(1);
	}

	@Test
	void withoutALoopItWaitsOnReactorsTimer() {
		long started = System.nanoTime();
		assertThat(LoopTimer.after(Duration.ofMillis(100), null, "x").block(Duration.ofSeconds(5))).isEqualTo("x");
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(100));
	}

}
