package io.livenesslab.service;

import java.net.URI;

import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.health.contributor.AbstractReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * {@code demo.downstream-health=true} (DEMO_DOWNSTREAM_HEALTH): a health indicator for the downstream
 * ({@code demo.downstream-url}), written as a Spring user writes one for the database or the service they
 * call: the cheapest real call through the same client and path the requests take (what Boot's own
 * DataSourceHealthIndicator does with its validation query, through the application's DataSource and so
 * through its connection pool), UP when it answers 2xx, DOWN with the error otherwise. Its name in the
 * health groups is {@code downstream} (the bean's name without "HealthIndicator").
 *
 * <p>
 * In reactive and servlet-async the requests call the downstream through {@link DownstreamClient}'s
 * {@code WebClient}, and so does the check: the same Reactor Netty pool of
 * {@code demo.downstream-max-connections} connections. When slow requests hold all of them, the check's
 * acquire waits in the pool's queue behind theirs, first come, first served (reactor-pool's
 * SimpleDequePool, shaded into reactor-netty-core 1.3 as {@code reactor.netty.internal.shaded.reactor.pool}:
 * {@code pendingOffer} queues each pending acquire with {@code offerLast}, {@code pendingPoll} serves them
 * with {@code pollFirst}; the pool's {@code fifo()} and {@code lifo()} order only its idle connections), up to
 * the pool's 60 s {@code pendingAcquireTimeout}, long after any probe has given up. That is the storm of
 * magfest/ubersystem#4600, where liveness hit a page that needed the database pool: with
 * {@code downstream} in the liveness group, the load that runs one pod's pool dry runs every pod's dry
 * (the Service spreads it), liveness times out in all of them in the same minute, and every pod restarts,
 * though none is broken. The blocking modes call the downstream through the JDK's HttpClient, which has
 * no pool of ours to share: there the check keeps a {@code WebClient} of its own (Reactor Netty's default
 * pool), which no request uses.
 *
 * <p>
 * On its own it changes no probe: it is part of {@code /actuator/health} only. The lab's
 * dependency-in-liveness scenario adds it where people wrongly put it,
 * {@code management.endpoint.health.group.liveness.include=livenessState,downstream}, so that an outage
 * of the downstream, or its pool run dry, fails every pod's liveness probe; the remedy keeps it out of the
 * liveness group, in the readiness group at most (docs/service.md, "Settings"). Off by default.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty("demo.downstream-health")
class DownstreamHealth {

	@Bean
	ReactiveHealthIndicator downstreamHealthIndicator(DemoProperties properties,
			ObjectProvider<WebClient> downstreamClient) {
		if (properties.downstreamUrl() == null) {
			throw new IllegalStateException(
					"demo.downstream-health (DEMO_DOWNSTREAM_HEALTH) checks the downstream: set demo.downstream-url (DEMO_DOWNSTREAM_URL) too");
		}
		// DownstreamClient's where the mode has one (reactive, servlet-async), else a client of its own.
		return new DownstreamHealthIndicator(downstreamClient.getIfAvailable(WebClient::create), properties.downstreamUrl());
	}

	/** One GET of the downstream's API asking for no latency: its {@code SELECT 1}. */
	static final class DownstreamHealthIndicator extends AbstractReactiveHealthIndicator {

		private final WebClient client;

		private final URI ping;

		DownstreamHealthIndicator(WebClient client, URI downstream) {
			super("the downstream did not answer its health check");
			this.client = client;
			this.ping = UriComponentsBuilder.fromUri(downstream).replaceQueryParam("latencyMs", 0).build(true).toUri();
		}

		@Override
		protected Mono<Health> doHealthCheck(Health.Builder builder) {
			return this.client.get()
				.uri(this.ping)
				.retrieve()
				.toBodilessEntity()
				.map((answer) -> builder.up().withDetail("url", this.ping.toString()).build());
		}

	}

}
