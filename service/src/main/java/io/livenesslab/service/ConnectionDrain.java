package io.livenesslab.service;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Shutdown that tells the client. When the context closes (SIGTERM: a rolling update, a scale-down, a
 * liveness kill), Boot first turns readiness to REFUSING_TRAFFIC, then stops the lifecycle beans from the
 * highest phase down. This one stops first and, for {@code demo.drain}, keeps the server serving and
 * accepting while every response says {@code Connection: close}; Reactor Netty and Tomcat close a
 * connection after a response with that header. Only then does the web server's graceful shutdown begin
 * (phase {@code WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE}, 1,024 lower): it waits for the
 * requests still in flight and closes idle connections without a word (Reactor Netty and Tomcat alike),
 * which a client that sends its next request at that moment sees as a connection closed under it. After
 * the drain every busy keep-alive connection has already been closed cleanly, after a full answer. The
 * header is set by a filter of each stack ({@link OnWebFlux}, {@link OnServlet}).
 */
@Component
final class ConnectionDrain implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(ConnectionDrain.class);

	private final Duration period;

	private volatile boolean running;

	private volatile boolean draining;

	ConnectionDrain(DemoProperties properties) {
		this.period = properties.drain();
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

	/** WebFlux: says {@code Connection: close} on every response committed once the drain has begun. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = Type.REACTIVE)
	static class OnWebFlux {

		@Bean
		WebFilter connectionCloseWhileDraining(ConnectionDrain drain) {
			return (ServerWebExchange exchange, WebFilterChain chain) -> {
				ServerHttpResponse response = exchange.getResponse();
				// Decided when the response is committed, not when the request arrived: a request in flight when
				// the drain begins gets the header too.
				response.beforeCommit(() -> {
					if (drain.draining()) {
						response.getHeaders().set(HttpHeaders.CONNECTION, "close");
					}
					return Mono.empty();
				});
				return chain.filter(exchange);
			};
		}

	}

	/**
	 * Spring MVC: the same, as a servlet filter. A servlet response has no hook at its commit, so the header
	 * is set when the request arrives during the drain, and, for a request in flight when the drain begins,
	 * when its body is about to be written (its headers go out with the body's first bytes). An async
	 * request's answer is written on a dispatch of its own, which passes this filter again.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = Type.SERVLET)
	static class OnServlet {

		@Bean
		OncePerRequestFilter connectionCloseWhileDraining(ConnectionDrain drain) {
			return new OncePerRequestFilter() {

				@Override
				protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response,
						FilterChain chain) throws ServletException, IOException {
					closeIfDraining(response);
					chain.doFilter(request, new HttpServletResponseWrapper(response) {

						@Override
						public ServletOutputStream getOutputStream() throws IOException {
							closeIfDraining(response);
							return super.getOutputStream();
						}

						@Override
						public PrintWriter getWriter() throws IOException {
							closeIfDraining(response);
							return super.getWriter();
						}

					});
				}

				private void closeIfDraining(HttpServletResponse response) {
					if (drain.draining() && !response.isCommitted()) {
						response.setHeader(HttpHeaders.CONNECTION, "close");
					}
				}

				@Override
				protected boolean shouldNotFilterAsyncDispatch() {
					return false;
				}

			};
		}

	}

}
