package io.livenesslab.service;

import java.io.IOException;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.reactive.function.client.WebClientException;

/** Turns the service's own errors into RFC 9457 problem details ({@code application/problem+json}). */
@RestControllerAdvice
class ProblemHandler {

	@ExceptionHandler
	ProblemDetail badParameter(BadParameterException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, ex.getMessage());
		problem.setTitle("Bad request parameter");
		problem.setProperty("parameter", ex.parameter());
		problem.setProperty("rule", ex.getMessage());
		return problem;
	}

	/** Shed: over the cap on requests in flight. Retry-After says when to come back. */
	@ExceptionHandler
	ResponseEntity<ProblemDetail> tooBusy(TooBusyException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.TOO_MANY_REQUESTS, ex.getMessage());
		problem.setTitle("Too many requests in flight");
		problem.setProperty("maxInFlight", ex.maxInFlight());
		return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS).header(HttpHeaders.RETRY_AFTER, "1").body(problem);
	}

	/** The downstream failed or answered an error: the gateway's fault, not ours, so 502. */
	@ExceptionHandler({ IOException.class, WebClientException.class })
	ProblemDetail downstreamFailed(Exception ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_GATEWAY,
				"downstream call failed: " + ((ex.getMessage() != null) ? ex.getMessage() : ex.getClass().getSimpleName()));
		problem.setTitle("Downstream failed");
		return problem;
	}

}
