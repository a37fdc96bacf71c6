package io.livenesslab.service;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code GET /api/work} is served the way Spring serves every request: through Boot's chain and the
 * {@code DispatcherHandler}, which asks its handler mappings for the handler, and under Boot's
 * {@code http.server.requests} observation. Nothing routes it around them.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = { "demo.mode=reactive", "demo.latency-ms=1" })
@AutoConfigureWebTestClient
class DispatcherTests {

	@Autowired
	WebTestClient client;

	@Autowired
	AskedMappings asked;

	@Autowired
	MeterRegistry registry;

	@Test
	void theDispatcherAsksItsHandlerMappingsForWork() {
		this.asked.paths().clear();
		this.client.get().uri("/api/work").exchange().expectStatus().isOk();
		this.client.get().uri("/livez").exchange().expectStatus().isOk();
		assertThat(this.asked.paths()).containsExactly("GET /api/work", "GET /livez");
	}

	@Test
	void workIsObservedAsEveryRequestIs() throws InterruptedException {
		this.client.get().uri("/api/work?latencyMs=1").exchange().expectStatus().isOk();
		// The observation stops once the answer is written, which may be just after the client has read it.
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (this.registry.find("http.server.requests").tag("uri", "/api/work").timer() == null
				&& System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(this.registry.get("http.server.requests").tag("uri", "/api/work").timer().count()).isEqualTo(1);
	}

	/** Every request the dispatcher asks its handler mappings about, first among them. */
	record AskedMappings(List<String> paths) implements HandlerMapping, Ordered {

		@Override
		public Mono<Object> getHandler(ServerWebExchange exchange) {
			this.paths.add(exchange.getRequest().getMethod() + " " + exchange.getRequest().getPath().value());
			return Mono.empty();
		}

		@Override
		public int getOrder() {
			return Ordered.HIGHEST_PRECEDENCE;
		}

	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Spy {

		@Bean
		AskedMappings askedMappings() {
			return new AskedMappings(new CopyOnWriteArrayList<>());
		}

	}

}
