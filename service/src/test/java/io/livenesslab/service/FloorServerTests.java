package io.livenesslab.service;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.netty.DisposableServer;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The benchmark's floor ({@link FloorServer}) answers {@code /api/work} as the service does: the same JSON
 * fields for a good request, the same 400 problem+json for a bad one. Without that the bench's "cost over
 * the floor" would compare different work.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "demo.mode=reactive", "demo.latency-ms=5", "demo.latency-max-ms=60000" })
class FloorServerTests {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private static final HttpClient CLIENT = HttpClient.newHttpClient();

	private static DisposableServer floor;

	@LocalServerPort
	int servicePort;

	@BeforeAll
	static void startFloor() {
		floor = new FloorServer(5, 60000).start("127.0.0.1", 0);
	}

	@AfterAll
	static void stopFloor() {
		floor.disposeNow();
	}

	@Test
	void aGoodRequestWaitsAndAnswersTheServicesFields() throws Exception {
		Answer service = get(this.servicePort, "/api/work?latencyMs=50");
		Answer bare = get(floor.port(), "/api/work?latencyMs=50");
		assertThat(bare.status()).isEqualTo(200).isEqualTo(service.status());
		assertThat(bare.contentType()).startsWith("application/json");
		assertThat(bare.body().keySet()).isEqualTo(service.body().keySet());
		assertThat(bare.body()).containsEntry("mode", "floor").containsEntry("requestedMs", 50);
		assertThat(((Number) bare.body().get("waitedMs")).longValue()).isGreaterThanOrEqualTo(50);
		assertThat(get(floor.port(), "/api/work").body()).containsEntry("requestedMs", 5);
	}

	@ParameterizedTest(name = "{0} -> 400 as the service answers")
	@ValueSource(strings = { "latencyMs=abc", "latencyMs=60001", "minMs=100", "latencyMs=10&mix=10:100" })
	void aBadRequestIsRefusedAsTheServiceRefusesIt(String query) throws Exception {
		Answer service = get(this.servicePort, "/api/work?" + query);
		Answer bare = get(floor.port(), "/api/work?" + query);
		assertThat(bare.status()).isEqualTo(400).isEqualTo(service.status());
		assertThat(bare.contentType()).isEqualTo("application/problem+json");
		for (String field : new String[] { "status", "title", "parameter", "rule", "detail", "instance" }) {
			assertThat(bare.body().get(field)).as(field).isEqualTo(service.body().get(field));
		}
	}

	private static Answer get(int port, String path) throws Exception {
		HttpResponse<String> response = CLIENT.send(
				HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET().build(),
				HttpResponse.BodyHandlers.ofString());
		@SuppressWarnings("unchecked")
		Map<String, Object> body = JSON.readValue(response.body(), Map.class);
		return new Answer(response.statusCode(), response.headers().firstValue("Content-Type").orElse(""), body);
	}

	record Answer(int status, String contentType, Map<String, Object> body) {
	}

}
