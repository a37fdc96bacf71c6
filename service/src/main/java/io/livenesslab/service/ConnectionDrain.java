package io.livenesslab.service;

import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

import org.springframework.context.SmartLifecycle;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Shutdown that tells the client. When the context closes (SIGTERM: a rolling update, a scale-down, a
 * liveness kill), Boot first turns readiness to REFUSING_TRAFFIC, then stops the lifecycle beans from the
 * highest phase down. This one stops first and, for {@code demo.drain}, keeps the server serving and
 * accepting while every response says {@code Connection: close}; Reactor Netty closes a connection after
 * a response with that header. Only then does the web server's graceful shutdown begin (phase
 * {@code WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE}, 1,024 lower): it waits for the
 * requests still in flight and closes idle connections without a word, which a client that sends its
 * next request at that moment sees as a connection closed under it. After the drain every busy
 * keep-alive connection has already been closed cleanly, after a full answer.
 */
@Component
final class ConnectionDrain implements SmartLifecycle, WebFilter {

	private static final Log logger = LogFactory.getLog(ConnectionDrain.class);

	private final Duration period;

	private volatile boolean running;

	private volatile boolean draining;

	ConnectionDrain(DemoProperties properties) {
		this.period = properties.drain();
	}

	/** Says {@code Connection: close} on every response committed once the drain has begun. */
	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		ServerHttpResponse response = exchange.getResponse();
		// Decided when the response is committed, not when the request arrived: a request in flight when
		// the drain begins gets the header too.
		response.beforeCommit(() -> {
			if (this.draining) {
				response.getHeaders().set(HttpHeaders.CONNECTION, "close");
			}
			return Mono.empty();
		});
		return chain.filter(exchange);
	}

	boolean draining() {
		return this.draining;
	}

	@Override
	public void start() {
		this.draining = false;
		this.running = true;
	}

	/** Drains: blocks the context's shutdown (not an event loop) for the drain period. */
	@Override
	public void stop() {
		this.draining = true;
		if (this.period.isPositive()) {
			logger.info("Draining for " + this.period.toMillis() + " ms: every response says Connection: close");
			try {
				Thread.sleep(this.period);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/** Above the web server's graceful shutdown, so the drain ends before it begins. */
	@Override
	public int getPhase() {
		return Integer.MAX_VALUE;
	}

	/** A paused context (Spring's {@code pause()}) keeps serving: draining is for a stop only. */
	@Override
	public boolean isPauseable() {
		return false;
	}

}
