package io.livenesslab.service;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** How the service waits for its simulated latency (or its downstream). Chosen once, at start-up. */
enum Mode {

	/** Blocks the Reactor Netty event-loop thread that serves the request: the anti-pattern. */
	BLOCKING,
	/** Never blocks: a timer ({@code Mono.delay}) or a non-blocking {@code WebClient} call. */
	REACTIVE,
	/** The same blocking call, moved to {@code Schedulers.boundedElastic()}. */
	OFFLOADED,
	/** The same blocking call, on a virtual thread. */
	VIRTUAL;

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
		return this != REACTIVE;
	}

}
