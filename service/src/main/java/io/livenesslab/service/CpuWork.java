package io.livenesslab.service;

import java.time.Duration;

/**
 * {@code demo.cpu-ms}: a request's CPU-bound step (a hash, a JSON mapping, a template) as a loop that keeps
 * its thread computing. It runs for wall-clock time, because what it shows is a thread that never yields
 * for that long: a virtual thread is not preempted, so it holds its carrier until it parks, and once every
 * carrier computes, every other virtual thread waits, the one that would answer a liveness probe included
 * (spring-boot#48520). It is not a calibrated amount of work: on a busy machine, or in a container whose CPU
 * quota CFS throttles, it computes less in the same time. Nor could it count the thread's own CPU time
 * instead: {@code ThreadMXBean.getCurrentThreadCpuTime()} answers -1 on a virtual thread.
 */
final class CpuWork {

	/** Where each loop's result goes, so that the JIT cannot drop the loop as dead code. */
	private static volatile long sink;

	private CpuWork() {
	}

	/** Computes on the calling thread until {@code time} has passed, never parking or yielding. */
	static void spin(Duration time) {
		long deadline = System.nanoTime() + time.toNanos();
		long x = deadline;
		while (System.nanoTime() - deadline < 0) {
			for (int i = 0; i < 1_000; i++) {
				x = x * 6364136223846793005L + 1442695040888963407L;
				x ^= x >>> 29;
			}
		}
		sink = x;
	}

}
