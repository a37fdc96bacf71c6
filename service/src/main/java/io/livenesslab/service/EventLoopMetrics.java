package io.livenesslab.service;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.SingleThreadEventExecutor;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code reactor.netty.eventloop.pending.tasks}: the queue that grows behind a blocked event loop, one gauge
 * per event loop that serves a connection, read only when scraped. Reactor Netty's own server metrics
 * include the same gauge but also record every request (its size, time and URI), which cost about a fifth
 * of a reactive answer's CPU (issue 15); {@code demo.netty-metrics=true} turns those on again
 * (scripts/bench.sh --service-args measures what they cost). WebFlux only: on Tomcat, the thread pool's
 * meters are {@code tomcat_threads_*} (application.yaml).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = Type.REACTIVE)
class EventLoopMetrics {

	@Bean
	NettyServerCustomizer eventLoopPendingTasks(MeterRegistry registry,
			@Value("${demo.netty-metrics:false}") boolean nettyMetrics) {
		Set<EventLoop> registered = ConcurrentHashMap.newKeySet();
		return (server) -> {
			if (nettyMetrics) {
				return server.metrics(true, EventLoopMetrics::withoutQuery);
			}
			// Once per connection, on its event loop: a set lookup once the loop is known.
			return server.doOnChannelInit((observer, channel, address) -> {
				EventLoop loop = channel.eventLoop();
				if (loop instanceof SingleThreadEventExecutor executor && loop.inEventLoop() && registered.add(loop)) {
					Gauge.builder("reactor.netty.eventloop.pending.tasks", executor, SingleThreadEventExecutor::pendingTasks)
						.description("Tasks waiting in the event loop's queue")
						.tag("name", Thread.currentThread().getName())
						.register(registry);
				}
			});
		};
	}

	/** The URI tag of Reactor Netty's metrics: the path only, or every latencyMs value would make a new time series. */
	static String withoutQuery(String uri) {
		int query = uri.indexOf('?');
		return (query < 0) ? uri : uri.substring(0, query);
	}

}
