package io.livenesslab.service;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.netty.DisposableServer;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The benchmark's floor ({@link FloorServer}), in each of its layers, answers {@code /api/work} as the
 * service does: the same JSON fields for a good request, the same 400 problem+json for a bad one. Without
 * that the bench's "cost over the floor" would compare different work.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "demo.mode=reactive", "demo.latency-ms=5", "demo.latency-max-ms=60000" })
class FloorServerTests {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private static final HttpClient CLIENT = HttpClient.newHttpClient();

	private static final Map<FloorServer.Layer, DisposableServer> floors = new EnumMap<>(FloorServer.Layer.class);

	@LocalServerPort
	int servicePort;

	@BeforeAll
	static void startFloors() {
		for (FloorServer.Layer layer : FloorServer.Layer.values()) {
			floors.put(layer, new FloorServer(5, 60000, layer).start("127.0.0.1", 0));
		}
	}

	@AfterAll
	static void stopFloors() {
		floors.values().forEach(DisposableServer::disposeNow);
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(FloorServer.Layer.class)
	void aGoodRequestWaitsAndAnswersTheServicesFields(FloorServer.Layer layer) throws Exception {
		int port = floors.get(layer).port();
		Answer service = get(this.servicePort, "/api/work?latencyMs=50");
		Answer bare = get(port, "/api/work?latencyMs=50");
		assertThat(bare.status()).isEqualTo(200).isEqualTo(service.status());
		assertThat(bare.contentType()).startsWith("application/json");
		assertThat(bare.body().keySet()).isEqualTo(service.body().keySet());
		// The webflux layer runs the service's own handler, which names its mode.
		assertThat(bare.body()).containsEntry("mode", (layer == FloorServer.Layer.WEBFLUX) ? "reactive" : "floor")
			.containsEntry("requestedMs", 50);
		assertThat(((Number) bare.body().get("waitedMs")).longValue()).isGreaterThanOrEqualTo(50);
		assertThat(get(port, "/api/work").body()).containsEntry("requestedMs", 5);
		assertThat(CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz")).build(),
				HttpResponse.BodyHandlers.ofString())
			.statusCode()).as("readyz, which the bench waits for").isEqualTo(200);
	}

	@ParameterizedTest(name = "{0}: {1} -> 400 as the service answers")
	@MethodSource("badRequests")
	void aBadRequestIsRefusedAsTheServiceRefusesIt(FloorServer.Layer layer, String query) throws Exception {
		Answer service = get(this.servicePort, "/api/work?" + query);
		Answer bare = get(floors.get(layer).port(), "/api/work?" + query);
		assertThat(bare.status()).isEqualTo(400).isEqualTo(service.status());
		assertThat(bare.contentType()).isEqualTo("application/problem+json");
		for (String field : new String[] { "status", "title", "parameter", "rule", "detail", "instance" }) {
			assertThat(bare.body().get(field)).as(field).isEqualTo(service.body().get(field));
		}
	}

	static Stream<Arguments> badRequests() {
		return Arrays.stream(FloorServer.Layer.values())
			.flatMap((layer) -> Stream.of("latencyMs=abc", "latencyMs=60001", "minMs=100", "latencyMs=10&mix=10:100")
				.map((query) -> Arguments.of(layer, query)));
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
