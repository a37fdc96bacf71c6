package io.livenesslab.service;

import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.health.application.LivenessStateHealthIndicator;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code demo.liveness-off-pool=true}: the liveness check answers on the thread that asks (an event loop)
 * instead of on Reactor's boundedElastic. Spring Boot runs every non-reactive health indicator there
 * (HealthIndicatorAdapter), so in offloaded mode, once user work holds every boundedElastic thread, the
 * liveness probe queues behind it and the pod is killed. Answering from the event loop keeps the pod
 * alive, and that is the lesson: liveness then says "alive" about a service whose pool is saturated,
 * while readiness (still on the pool) times out and the requests queue behind the pool.
 *
 * <p>The bean takes the name of Boot's own (AvailabilityHealthContributorAutoConfiguration backs off
 * for it), so the {@code liveness} health group and its {@code livenessState} member are unchanged.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty("demo.liveness-off-pool")
class LivenessOffPool {

	@Bean
	ReactiveHealthIndicator livenessStateHealthIndicator(ApplicationAvailability availability) {
		LivenessStateHealthIndicator state = new LivenessStateHealthIndicator(availability);
		// Reading the availability state is a field read: nothing here blocks.
		return () -> Mono.fromSupplier(state::health);
	}

}
