package io.livenesslab.service;

import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * How the service waits for its simulated latency (or its downstream), chosen once, at start-up: on which
 * web stack, whether it makes a blocking call and on which threads. A new mode is a new constant here;
 * {@link ModeStack} reads the stack from it, {@link Waiter} (WebFlux) the call and its threads, and
 * {@link WorkController} (Spring MVC) the wait.
 */
enum Mode {

	/**
	 * Blocks the Reactor Netty event-loop thread that serves the request: the anti-pattern. The immediate
	 * scheduler runs the call on the thread that subscribed, which is that event loop.
	 */
	BLOCKING(Stack.WEBFLUX, true, Schedulers::immediate),
	/** Never blocks: a timer on the event loop ({@link LoopTimer}) or a non-blocking {@code WebClient} call. */
	REACTIVE(Stack.WEBFLUX, false, Schedulers::immediate),
	/** The same blocking call, moved to {@code Schedulers.boundedElastic()}. */
	OFFLOADED(Stack.WEBFLUX, true, Schedulers::boundedElastic),
	/** The same blocking call, on a virtual thread of its own. */
	VIRTUAL(Stack.WEBFLUX, true, () -> Schedulers.fromExecutorService(
			Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("virtual-", 0).factory()), "virtual")),
	/** Spring MVC: the blocking call on the Tomcat worker thread that serves the request (200 of them by default). */
	SERVLET(Stack.SERVLET, true, null),
	/** Spring MVC: a {@code DeferredResult} completed by a timer (or {@code WebClient}): no thread waits. */
	SERVLET_ASYNC(Stack.SERVLET, false, null),
	/** Spring MVC: the blocking call on the virtual thread Tomcat serves the request on. */
	SERVLET_VIRTUAL(Stack.SERVLET, true, null);

	/** The mode when none is given: also {@code ${APP_MODE:reactive}} in application.yaml. */
	static final String DEFAULT = "reactive";

	/** The web stack a mode runs on; both are in the jar, and the mode chooses ({@link ModeStack}). */
	enum Stack {

		/** Spring WebFlux on Reactor Netty. */
		WEBFLUX,

		/** Spring MVC on Tomcat. */
		SERVLET

	}

	private final Stack stack;

	private final boolean blockingCall;

	private final Supplier<Scheduler> scheduler;

	Mode(Stack stack, boolean blockingCall, Supplier<Scheduler> scheduler) {
		this.stack = stack;
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

	/** The name APP_MODE takes: the constant in lower case, '-' for '_' ({@code servlet-async}). */
	String label() {
		return name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	Stack stack() {
		return this.stack;
	}

	/**
	 * Whether this mode makes a blocking call (blocking, offloaded, virtual, servlet, servlet-virtual)
	 * rather than a non-blocking one.
	 */
	boolean blockingCall() {
		return this.blockingCall;
	}

	/**
	 * The scheduler a WebFlux mode subscribes its blocking call on; a new one for each call (made once, at
	 * start-up). The servlet modes have none: Tomcat chooses the thread.
	 */
	Scheduler scheduler() {
		if (this.scheduler == null) {
			throw new IllegalStateException("mode " + label() + " runs on Spring MVC: it has no Reactor scheduler");
		}
		return this.scheduler.get();
	}

}
