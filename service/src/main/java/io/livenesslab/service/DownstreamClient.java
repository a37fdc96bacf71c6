package io.livenesslab.service;

import java.time.Duration;

import io.netty.channel.ChannelOption;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The one non-blocking client of the downstream ({@code demo.downstream-url}), and so the one connection
 * pool to it ({@code demo.downstream-max-connections} connections): a bean,
 * so that everything that calls the downstream without blocking shares it, as the requests and Boot's
 * DataSourceHealthIndicator share an application's DataSource and its pool. Reactive mode's {@link Waiter}
 * and servlet-async's {@link WorkController.Async} make their requests' calls through it, and
 * {@link DownstreamHealth} its check. Only in those two modes, the ones whose call does not block: the
 * others call the downstream through the JDK's HttpClient, which has no pool of ours.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty("demo.downstream-url")
@ConditionalOnMode({ Mode.REACTIVE, Mode.SERVLET_ASYNC })
class DownstreamClient {

	@Bean
	WebClient downstreamWebClient(DemoProperties properties) {
		return WebClient.builder().clientConnector(new ReactorClientHttpConnector(pooled(properties))).build();
	}

	/** Reactor Netty's default pool holds 500 connections: far too few for thousands in flight. */
	private static HttpClient pooled(DemoProperties properties) {
		ConnectionProvider pool = ConnectionProvider.builder("downstream")
			.maxConnections(properties.downstreamMaxConnections())
			.pendingAcquireMaxCount(-1)
			.pendingAcquireTimeout(Duration.ofSeconds(60))
			.build();
		return HttpClient.create(pool).option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 5000);
	}

}
