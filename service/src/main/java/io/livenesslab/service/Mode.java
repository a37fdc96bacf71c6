package io.livenesslab.service;

import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * How the service waits for its simulated latency (or its downstream), chosen once, at start-up: whether
 * it makes a blocking call and on which threads. A new mode is a new constant here; {@link Waiter} reads
 * both from the constant.
 */
enum Mode {

	/**
	 * Blocks the Reactor Netty event-loop thread that serves the request: the anti-pattern. The immediate
	 * scheduler runs the call on the thread that subscribed, which is that event loop.
	 */
	BLOCKING(true, Schedulers::immediate),
	/** Never blocks: a timer on the event loop ({@link LoopTimer}) or a non-blocking {@code WebClient} call. */
	REACTIVE(false, Schedulers::immediate),
	/** The same blocking call, moved to {@code Schedulers.boundedElastic()}. */
	OFFLOADED(true, Schedulers::boundedElastic),
	/** The same blocking call, on a virtual thread of its own. */
	VIRTUAL(true, () -> Schedulers.fromExecutorService(
			Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("virtual-", 0).factory()), "virtual"));

	private final boolean blockingCall;

	private final Supplier<Scheduler> scheduler;

	Mode(boolean blockingCall, Supplier<Scheduler> scheduler) {
		this.blockingCall = blockingCall;
		this.scheduler = scheduler;
	}

	static String valid() {
		return Arrays.stream(values()).map(Mode::label).collect(Collectors.joining(", "));
	}

	/** Parses a mode name case-insensitively, or fails with a message listing the valid ones. */
	static Mode parse(String name) {
		for (Mode mode : values()) {
			if (mode.label().equalsIgnoreCase(name == null ? "" : name.strip())) {
				return mode;
			}
		}
		throw new IllegalArgumentException(
				"unknown demo.mode (APP_MODE) '" + name + "': valid modes are " + valid());
	}

	String label() {
		return name().toLowerCase(Locale.ROOT);
	}

	/** Whether this mode makes a blocking call (blocking, offloaded, virtual) rather than a reactive one. */
	boolean blockingCall() {
		return this.blockingCall;
	}

	/** The scheduler the blocking call is subscribed on; a new one for each call (made once, at start-up). */
	Scheduler scheduler() {
		return this.scheduler.get();
	}

}
