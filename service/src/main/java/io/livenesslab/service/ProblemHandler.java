package io.livenesslab.service;

import java.io.IOException;
import java.net.URI;

import reactor.core.publisher.Mono;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.web.reactive.function.client.WebClientException;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * Turns the service's own errors into RFC 9457 problem details ({@code application/problem+json}):
 * the error filter of {@link WorkEndpoint}'s route; {@link WorkController}'s exception handler answers
 * the same problems on Spring MVC.
 */
final class ProblemHandler {

	private ProblemHandler() {
	}

	/** Whether the error is one of the service's own, answered here; anything else stays a 500. */
	static boolean handles(Throwable ex) {
		return ex instanceof BadParameterException || ex instanceof TooBusyException || ex instanceof IOException
				|| ex instanceof WebClientException;
	}

	static Mono<ServerResponse> render(Throwable ex, ServerRequest request) {
		ProblemDetail problem = problem(ex);
		problem.setInstance(URI.create(request.path()));
		ServerResponse.BodyBuilder response = ServerResponse.status(problem.getStatus())
			.contentType(MediaType.APPLICATION_PROBLEM_JSON);
		if (ex instanceof TooBusyException) {
			// Shed: come back in a second.
			response.header(HttpHeaders.RETRY_AFTER, "1");
		}
		return response.bodyValue(problem);
	}

	/** The problem for one of the service's own errors ({@link #handles}), on either stack. */
	static ProblemDetail problem(Throwable ex) {
		if (ex instanceof BadParameterException bad) {
			ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, bad.getMessage());
			problem.setTitle("Bad request parameter");
			problem.setProperty("parameter", bad.parameter());
			problem.setProperty("rule", bad.getMessage());
			return problem;
		}
		if (ex instanceof TooBusyException busy) {
			ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.TOO_MANY_REQUESTS, busy.getMessage());
			problem.setTitle("Too many requests in flight");
			problem.setProperty("maxInFlight", busy.maxInFlight());
			return problem;
		}
		// The downstream failed or answered an error: the gateway's fault, not ours, so 502.
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_GATEWAY,
				"downstream call failed: " + ((ex.getMessage() != null) ? ex.getMessage() : ex.getClass().getSimpleName()));
		problem.setTitle("Downstream failed");
		return problem;
	}

}
