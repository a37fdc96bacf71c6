package io.livenesslab.service;

import java.time.Duration;

import io.netty.channel.EventLoop;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.WebFilter;

/**
 * {@code demo.api-delay} (DEMO_API_DELAY, a duration such as {@code 3s}): every request under
 * {@code /api/} waits this long before it is served, a dependency having a bad day: its API slow while its
 * own probes ({@code /livez}, {@code /readyz}, {@code /actuator}) still answer at once, so its kubelet
 * keeps it. Set on the downstream by the lab's dependency-in-liveness scenario for the slow part of its
 * outage. Unset: no filter; 0: no delay.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty("demo.api-delay")
class ApiDelay {

	static final String PREFIX = "/api/";

	@Bean
	WebFilter slowApi(@Value("${demo.api-delay}") Duration delay) {
		if (delay.isNegative()) {
			throw new IllegalArgumentException("demo.api-delay (DEMO_API_DELAY) must be >= 0, got " + delay);
		}
		// A timer on the connection's event loop (LoopTimer), not a sleep: the loop stays free while the request waits.
		return (exchange, chain) -> {
			if (delay.isZero() || !exchange.getRequest().getPath().pathWithinApplication().value().startsWith(PREFIX)) {
				return chain.filter(exchange);
			}
			EventLoop loop = LoopTimer.of(ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest()));
			return LoopTimer.after(delay, loop, Boolean.TRUE).then(Mono.defer(() -> chain.filter(exchange)));
		};
	}

}
