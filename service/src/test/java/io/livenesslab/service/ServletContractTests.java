package io.livenesslab.service;

import java.lang.reflect.Method;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The servlet modes keep the WebFlux modes' contract, each on a real Tomcat: every query of
 * {@link WorkParametersTests}' tables (read from its annotations, so a rule added there is held on both
 * stacks) is answered as that test requires, a bad one with a 400 problem+json naming the parameter, never
 * a 500; and the same probes, actuator endpoints, meters and API contract are there.
 */
class ServletContractTests {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private static final List<Mode> SERVLET_MODES = Arrays.stream(Mode.values())
		.filter((mode) -> mode.stack() == Mode.Stack.SERVLET)
		.toList();

	private static final Map<Mode, RunningService> services = new EnumMap<>(Mode.class);

	@BeforeAll
	static void startEveryServletMode() {
		// WorkParametersTests' own settings.
		for (Mode mode : SERVLET_MODES) {
			services.put(mode, RunningService.start(Map.of("demo.mode", mode.label(), "demo.latency-ms", 5, "demo.latency-max-ms", 60000)));
		}
	}

	@AfterAll
	static void stopThem() {
		services.values().forEach(RunningService::close);
	}

	@ParameterizedTest(name = "{0}: {1} -> 400 naming {2}")
	@MethodSource("badInput")
	void badInputIsA400ProblemNamingTheParameter(Mode mode, String query, String parameter, String rule) throws Exception {
		HttpResponse<String> response = work(mode, query);
		assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		Map<String, Object> problem = json(response);
		assertThat(problem).containsEntry("status", 400)
			.containsEntry("title", "Bad request parameter")
			.containsEntry("parameter", parameter)
			.containsEntry("instance", "/api/work")
			.containsEntry("rule", problem.get("detail"));
		assertThat((String) problem.get("detail")).contains(rule);
	}

	@ParameterizedTest(name = "{0}: {1} -> 200, waited {2} to {3} ms")
	@MethodSource("goodInput")
	void goodInputIsAnsweredWithTheWait(Mode mode, String query, long minMs, long maxMs) throws Exception {
		HttpResponse<String> response = work(mode, query);
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
		Map<String, Object> answer = json(response);
		assertThat(answer.keySet()).containsExactlyInAnyOrder("mode", "requestedMs", "waitedMs", "thread", "pod",
				"inFlight", "downstream");
		assertThat(answer).containsEntry("mode", mode.label()).containsEntry("inFlight", 1).containsEntry("downstream", false);
		assertThat(((Number) answer.get("requestedMs")).longValue()).isBetween(minMs, maxMs);
		assertThat(((Number) answer.get("waitedMs")).longValue()).isGreaterThanOrEqualTo(minMs);
		assertThat((String) answer.get("thread")).isNotEmpty();
		assertThat((String) answer.get("pod")).isNotEmpty();
	}

	@ParameterizedTest
	@EnumSource(mode = EnumSource.Mode.MATCH_ALL, names = "SERVLET.*")
	void servesTheProbesTheMetersAndTheApiContractButNothingElseOfActuator(Mode mode) throws Exception {
		RunningService service = services.get(mode);
		assertThat(RunningService.get(service.uri("/api/work?latencyMs=1")).statusCode()).isEqualTo(200);
		for (String path : new String[] { "/livez", "/readyz", "/actuator/health/liveness", "/actuator/health/readiness" }) {
			assertThat(RunningService.get(service.uri(path)).body()).as(path).contains("\"status\":\"UP\"");
		}
		assertThat(RunningService.get(service.uri("/actuator/info")).body()).contains("\"mode\":\"" + mode.label() + "\"");
		assertThat(RunningService.get(service.uri("/actuator/prometheus")).body())
			// What the scripted run and the Live tab read, by the same names and tags as on WebFlux.
			.contains("demo_requests_in_flight{application=\"liveness-lab-service\",mode=\"" + mode.label() + "\"}")
			.contains("demo_work_latency_seconds_bucket{")
			.containsPattern("http_server_requests_seconds_count\\{[^}]*uri=\"/api/work\"")
			// Tomcat's thread pool, where a servlet request waits for a thread.
			.contains("tomcat_threads_busy_threads{")
			.contains("tomcat_threads_config_max_threads{")
			.doesNotContain("reactor_netty_eventloop_pending_tasks")
			.doesNotContain("latencyMs=");
		assertThat(RunningService.get(service.uri("/v3/api-docs")).body())
			.contains("\"/api/work\"").contains("\"latencyMs\"").contains("\"mix\"");
		assertThat(RunningService.get(service.uri("/actuator/env")).statusCode()).isEqualTo(404);
	}

	/** GET /api/work?QUERY in MODE (a space in the query sent as %20, as WebTestClient sends it). */
	private static HttpResponse<String> work(Mode mode, String query) throws Exception {
		return RunningService.get(services.get(mode).uri("/api/work?" + query.replace(" ", "%20")));
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> json(HttpResponse<String> response) {
		return JSON.readValue(response.body(), Map.class);
	}

	/** WorkParametersTests' 400 table, for every servlet mode: mode, query, parameter, rule. */
	static Stream<Arguments> badInput() throws Exception {
		return forEveryServletMode(table("badInputIsA400ProblemNamingTheParameter", String.class, String.class, String.class));
	}

	/** WorkParametersTests' 200 table, for every servlet mode: mode, query, min ms, max ms. */
	static Stream<Arguments> goodInput() throws Exception {
		return forEveryServletMode(table("goodInputIsAnsweredWithTheWait", String.class, long.class, long.class))
			.map((arguments) -> {
				Object[] row = arguments.get();
				return Arguments.of(row[0], row[1], Long.parseLong((String) row[2]), Long.parseLong((String) row[3]));
			});
	}

	private static Stream<Arguments> forEveryServletMode(List<String[]> rows) {
		return SERVLET_MODES.stream().flatMap((mode) -> rows.stream().map((row) -> {
			Object[] arguments = new Object[row.length + 1];
			arguments[0] = mode;
			System.arraycopy(row, 0, arguments, 1, row.length);
			return Arguments.of(arguments);
		}));
	}

	/** The rows of a WorkParametersTests method's {@code @CsvSource} text block, '|'-separated, '' for empty. */
	private static List<String[]> table(String method, Class<?>... parameters) throws NoSuchMethodException {
		Method test = WorkParametersTests.class.getDeclaredMethod(method, parameters);
		CsvSource csv = test.getAnnotation(CsvSource.class);
		return csv.textBlock()
			.lines()
			.filter((line) -> !line.isBlank())
			.map((line) -> Arrays.stream(line.split("\\" + csv.delimiter(), -1))
				.map(String::strip)
				.map((cell) -> cell.equals("''") ? "" : cell)
				.toArray(String[]::new))
			.toList();
	}

}
