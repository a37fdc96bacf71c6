package io.livenesslab.service;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Turns on Reactor Netty's server metrics, among them {@code reactor.netty.eventloop.pending.tasks}:
 * the queue that grows behind a blocked event loop. {@code demo.netty-metrics=false} turns them off, to
 * measure what they cost per request (scripts/bench.sh --service-args).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty(name = "demo.netty-metrics", matchIfMissing = true)
class NettyMetrics {

	@Bean
	NettyServerCustomizer nettyServerMetrics() {
		return (server) -> server.metrics(true, NettyMetrics::withoutQuery);
	}

	/** The URI tag: the path only, or every latencyMs value would make a new time series. */
	static String withoutQuery(String uri) {
		int query = uri.indexOf('?');
		return (query < 0) ? uri : uri.substring(0, query);
	}

}
