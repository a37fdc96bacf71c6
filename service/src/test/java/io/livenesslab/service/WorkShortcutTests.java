package io.livenesslab.service;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

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
import org.springframework.web.server.WebFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link WorkShortcut}: {@code GET /api/work} skips the dispatcher's handler mappings but keeps Boot's
 * filters, and steps aside when the {@code http.server.requests} observation is switched on.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = { "demo.mode=reactive", "demo.latency-ms=1" })
@AutoConfigureWebTestClient
class WorkShortcutTests {

	@Autowired
	WebTestClient client;

	@Autowired
	AskedMappings asked;

	@Test
	void workSkipsTheHandlerMappingsWhileEverythingElseStillPassesThem() {
		this.asked.paths().clear();
		this.client.get().uri("/api/work").exchange().expectStatus().isOk();
		this.client.post().uri("/api/work").exchange().expectStatus().is4xxClientError();
		this.client.get().uri("/livez").exchange().expectStatus().isOk();
		assertThat(this.asked.paths()).containsExactly("POST /api/work", "GET /livez");
	}

	@Test
	void workStillPassesBootsFilters() {
		this.client.get().uri("/api/work").exchange().expectStatus().isOk().expectHeader().valueEquals("X-Filtered", "yes");
	}

	@Test
	void withTheObservationOnWorkIsObservedThroughTheDispatcher() throws Exception {
		try (RunningService service = RunningService
			.start(Map.of("demo.mode", "reactive", "management.observations.enable.http.server.requests", "true"))) {
			assertThat(service.context().getBeansOfType(WorkShortcut.class)).isEmpty();
			assertThat(RunningService.get(service.uri("/api/work?latencyMs=1")).statusCode()).isEqualTo(200);
			assertThat(RunningService.get(service.uri("/actuator/prometheus")).body())
				.containsPattern("http_server_requests_seconds_count\\{[^}]*uri=\"/api/work\"");
		}
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
	static class Spies {

		@Bean
		AskedMappings askedMappings() {
			return new AskedMappings(new CopyOnWriteArrayList<>());
		}

		@Bean
		WebFilter filtered() {
			return (exchange, chain) -> {
				exchange.getResponse().getHeaders().set("X-Filtered", "yes");
				return chain.filter(exchange);
			};
		}

	}

}
