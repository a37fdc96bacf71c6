package io.livenesslab.service;

import java.net.URI;

import reactor.core.publisher.Mono;

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
 * DataSourceHealthIndicator does with its validation query), UP when it answers 2xx, DOWN with the error
 * otherwise. Its name in the health groups is {@code downstream} (the bean's name without
 * "HealthIndicator").
 *
 * <p>
 * On its own it changes no probe: it is part of {@code /actuator/health} only. The lab's
 * dependency-in-liveness scenario adds it where people wrongly put it,
 * {@code management.endpoint.health.group.liveness.include=livenessState,downstream}, so that an outage
 * of the downstream fails every pod's liveness probe; its remedy puts it in the readiness group instead
 * (docs/service.md, "Settings"). Off by default.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty("demo.downstream-health")
class DownstreamHealth {

	@Bean
	ReactiveHealthIndicator downstreamHealthIndicator(DemoProperties properties) {
		if (properties.downstreamUrl() == null) {
			throw new IllegalStateException(
					"demo.downstream-health (DEMO_DOWNSTREAM_HEALTH) checks the downstream: set demo.downstream-url (DEMO_DOWNSTREAM_URL) too");
		}
		return new DownstreamHealthIndicator(WebClient.create(), properties.downstreamUrl());
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
