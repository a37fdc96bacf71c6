package io.livenesslab.service;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.netty.channel.EventLoop;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;

/**
 * A wait on the event loop that serves the connection, instead of {@code Mono.delay} on Reactor's
 * parallel scheduler. With {@code Mono.delay} every wait ends on the timer thread ({@code parallel-1}):
 * the handler's rest, the encoding and the write run there, and the write is handed back to the
 * connection's event loop as a task, which wakes it. Scheduled on the loop itself (Netty's own scheduled
 * tasks, which it runs between its I/O), the wait ends where the answer is written.
 */
final class LoopTimer {

	private LoopTimer() {
	}

	/**
	 * Emits {@code value} after {@code latency} on {@code loop}; cancelling the wait cancels the task.
	 * Without a loop (a request that did not come through Reactor Netty), {@code Mono.delay}.
	 */
	static <T> Mono<T> after(Duration latency, EventLoop loop, T value) {
		if (loop == null) {
			return Mono.delay(latency).thenReturn(value);
		}
		return Mono.create((sink) -> {
			var task = loop.schedule(() -> sink.success(value), latency.toNanos(), TimeUnit.NANOSECONDS);
			sink.onCancel(() -> task.cancel(false));
		});
	}

	/** The event loop of the connection behind a Reactor Netty request or response, else null. */
	static EventLoop of(Object nativeExchange) {
		return (nativeExchange instanceof Connection connection) ? connection.channel().eventLoop() : null;
	}

}
