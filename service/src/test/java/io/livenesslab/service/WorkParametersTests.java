package io.livenesslab.service;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/** Every request parameter rule: bad input is a 400 problem+json naming the parameter, never a 500. */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "demo.mode=reactive", "demo.latency-ms=5", "demo.latency-max-ms=60000" })
@AutoConfigureWebTestClient
class WorkParametersTests {

	@Autowired
	WebTestClient client;

	@ParameterizedTest(name = "{0} -> 400 naming {1}")
	@CsvSource(delimiter = '|', textBlock = """
			latencyMs=abc                   | latencyMs | whole number
			latencyMs=1.5                   | latencyMs | whole number
			latencyMs=                      | latencyMs | must not be empty
			latencyMs=-1                    | latencyMs | must not be negative
			latencyMs=99999999999999999999  | latencyMs | too large
			latencyMs=60001                 | latencyMs | over the cap of 60000
			latencyMs=1e3                   | latencyMs | whole number
			minMs=500&maxMs=100             | minMs     | must not be greater than maxMs
			minMs=100                       | maxMs     | go together
			maxMs=100                       | minMs     | go together
			minMs=x&maxMs=100               | minMs     | whole number
			latencyMs=10&mix=10:100         | latencyMs | only one of
			mix=                            | mix       | adding up to 100
			mix=1000:80,4000:10             | mix       | add up to 90, not 100
			mix=1000:80,4000:30             | mix       | add up to 110, not 100
			mix=1000                        | mix       | latencyMs:percent pairs
			mix=1000:80;4000:20             | mix       | latencyMs:percent pairs
			mix=1000:abc                    | mix       | whole number from 1 to 100
			mix=1000:0,10:100               | mix       | whole number from 1 to 100
			mix=-5:100                      | mix       | must not be negative
			mix=70000:100                   | mix       | over the cap
			""")
	void badInputIsA400ProblemNamingTheParameter(String query, String parameter, String rule) {
		work(query, HttpStatus.BAD_REQUEST, MediaType.APPLICATION_PROBLEM_JSON)
			.jsonPath("$.status").isEqualTo(400)
			.jsonPath("$.parameter").isEqualTo(parameter)
			.jsonPath("$.detail").value((String detail) -> assertThat(detail).contains(rule));
	}

	@ParameterizedTest(name = "{0} -> 200, waited {1} to {2} ms")
	@CsvSource(delimiter = '|', textBlock = """
			''                    | 5   | 5
			latencyMs=0           | 0   | 0
			latencyMs=20          | 20  | 20
			minMs=10&maxMs=30     | 10  | 30
			minMs=15&maxMs=15     | 15  | 15
			mix=10:80,40:20       | 10  | 40
			mix=25:100            | 25  | 25
			mix=10:50, 20:50      | 10  | 20
			""")
	void goodInputIsAnsweredWithTheWait(String query, long minMs, long maxMs) {
		work(query, HttpStatus.OK, MediaType.APPLICATION_JSON)
			.jsonPath("$.mode").isEqualTo("reactive")
			.jsonPath("$.requestedMs").value((Integer ms) -> assertThat((long) ms).isBetween(minMs, maxMs))
			.jsonPath("$.waitedMs").value((Integer ms) -> assertThat((long) ms).isGreaterThanOrEqualTo(minMs))
			.jsonPath("$.thread").isNotEmpty()
			.jsonPath("$.pod").isNotEmpty()
			.jsonPath("$.inFlight").isEqualTo(1);
	}

	/** GET /api/work?QUERY, answered with STATUS and a body of TYPE, for the body's assertions. */
	private WebTestClient.BodyContentSpec work(String query, HttpStatus status, MediaType type) {
		return this.client.get()
			.uri("/api/work?" + query)
			.exchange()
			.expectStatus().isEqualTo(status)
			.expectHeader().contentTypeCompatibleWith(type)
			.expectBody();
	}

}
