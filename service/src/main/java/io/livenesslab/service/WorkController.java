package io.livenesslab.service;

import java.io.IOException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.enums.ParameterIn;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.servlet.http.HttpServletRequest;
import reactor.core.Disposable;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientException;

import io.livenesslab.service.WorkEndpoint.WorkResult;

/**
 * {@code GET /api/work} on Spring MVC and Tomcat (the servlet modes), written as an MVC user writes it:
 * the contract of {@link WorkEndpoint} (the same parameters and rules, the same answer, the same problems,
 * the same meters), from an {@code @RestController}.
 * <ul>
 * <li>servlet and servlet-virtual ({@link Blocking}): a blocking call ({@code Thread.sleep}, or the
 * downstream through {@code RestClient}) on the thread Tomcat serves the request on: one of its pool's
 * 200 platform threads, or a virtual thread of its own with {@code spring.threads.virtual.enabled};
 * <li>servlet-async ({@link Async}): a {@code DeferredResult} that a timer completes (or {@code WebClient},
 * with a downstream), so Tomcat's thread goes back to its pool while the request waits, and no thread waits
 * in its place.
 * </ul>
 * With {@code demo.cpu-ms} each request first computes on the thread Tomcat serves it on ({@link CpuWork}).
 */
abstract class WorkController {

	private final DemoProperties properties;

	private final WorkMeters meters;

	private final Duration cpu;

	private final String pod = WorkEndpoint.Work.podName();

	WorkController(DemoProperties properties, MeterRegistry registry) {
		this.properties = properties;
		this.meters = new WorkMeters(properties, registry);
		this.cpu = Duration.ofMillis(properties.cpuMs());
	}

	/** This request's latency, by {@link Latency}'s rules: a bad parameter is a 400 ({@link Problems}). */
	final Duration latency(String latencyMs, String minMs, String maxMs, String mix) {
		return Latency.parse(latencyMs, minMs, maxMs, mix, this.properties.latencyMs(), this.properties.latencyMaxMs())
			.next();
	}

	/** The request's CPU-bound step ({@code demo.cpu-ms}), on the calling thread. */
	final void compute() {
		if (this.cpu.isPositive()) {
			CpuWork.spin(this.cpu);
		}
	}

	final WorkMeters meters() {
		return this.meters;
	}

	final URI downstream() {
		return this.properties.downstreamUrl();
	}

	/** The answer, when the wait that began at {@code started} with {@code now} in flight is over. */
	final WorkResult result(Duration latency, long started, int now, String thread) {
		return new WorkResult(this.properties.mode().label(), latency.toMillis(),
				Duration.ofNanos(System.nanoTime() - started).toMillis(), thread, this.pod,
				Math.max(now, this.meters.inFlight()), downstream() != null);
	}

	/** The OpenAPI description of {@code /api/work}, in WorkEndpoint's words (its @RouterOperation's). */
	@Target(ElementType.METHOD)
	@Retention(RetentionPolicy.RUNTIME)
	@Operation(operationId = "work", summary = WorkEndpoint.SUMMARY, description = WorkEndpoint.DESCRIPTION,
			parameters = {
					@Parameter(in = ParameterIn.QUERY, name = WorkEndpoint.LATENCY_MS, schema = @Schema(type = "string"),
							description = WorkEndpoint.LATENCY_MS_DOC),
					@Parameter(in = ParameterIn.QUERY, name = WorkEndpoint.MIN_MS, schema = @Schema(type = "string"),
							description = WorkEndpoint.MIN_MS_DOC),
					@Parameter(in = ParameterIn.QUERY, name = WorkEndpoint.MAX_MS, schema = @Schema(type = "string"),
							description = WorkEndpoint.MAX_MS_DOC),
					@Parameter(in = ParameterIn.QUERY, name = WorkEndpoint.MIX, schema = @Schema(type = "string"),
							description = WorkEndpoint.MIX_DOC) },
			responses = {
					@ApiResponse(responseCode = "200", description = WorkEndpoint.WAITED,
							content = @Content(mediaType = MediaType.APPLICATION_JSON_VALUE, schema = @Schema(implementation = WorkResult.class))),
					@ApiResponse(responseCode = "400", description = WorkEndpoint.BAD_PARAMETER,
							content = @Content(mediaType = MediaType.APPLICATION_PROBLEM_JSON_VALUE)),
					@ApiResponse(responseCode = "429", description = WorkEndpoint.TOO_BUSY,
							content = @Content(mediaType = MediaType.APPLICATION_PROBLEM_JSON_VALUE)) })
	@interface WorkApiDoc {

	}

	/** servlet and servlet-virtual: the request's own thread waits. */
	@RestController
	@ConditionalOnWebApplication(type = Type.SERVLET)
	@ConditionalOnMode({ Mode.SERVLET, Mode.SERVLET_VIRTUAL })
	static final class Blocking extends WorkController {

		private final RestClient client;

		Blocking(DemoProperties properties, MeterRegistry registry) {
			super(properties, registry);
			// Built here, as WebFlux's modes build their WebClient (Boot's RestClient.Builder is a starter more).
			this.client = (properties.downstreamUrl() != null)
					? RestClient.builder().requestFactory(jdkClient(properties)).build() : null;
		}

		/**
		 * The JDK's HTTP client, as the WebFlux modes' blocking call has: Boot would choose Reactor Netty's,
		 * which is in the jar, and its pool of 500 connections would cap servlet-virtual. It waits for an
		 * answer as long as the longest latency a request may ask for, and half a minute more.
		 */
		private static JdkClientHttpRequestFactory jdkClient(DemoProperties properties) {
			JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(
					HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build());
			factory.setReadTimeout(Duration.ofMillis(properties.latencyMaxMs()).plusSeconds(30));
			return factory;
		}

		@GetMapping(path = WorkEndpoint.PATH, produces = MediaType.APPLICATION_JSON_VALUE)
		@WorkApiDoc
		WorkResult work(@RequestParam(required = false) String latencyMs, @RequestParam(required = false) String minMs,
				@RequestParam(required = false) String maxMs, @RequestParam(required = false) String mix)
				throws InterruptedException {
			Duration latency = latency(latencyMs, minMs, maxMs, mix);
			long started = System.nanoTime();
			int now = meters().begin();
			try {
				compute();
				if (this.client != null) {
					this.client.get().uri(Waiter.downstreamUri(downstream(), latency)).retrieve().toBodilessEntity();
				}
				else {
					Thread.sleep(latency);
				}
				return result(latency, started, now, Thread.currentThread().getName());
			}
			finally {
				meters().end(started);
			}
		}

	}

	/**
	 * servlet-async: nothing waits. The timer is a field, not an {@code Executor} bean: one would silently
	 * replace the executor Boot gives Spring MVC's async requests.
	 */
	@RestController
	@ConditionalOnWebApplication(type = Type.SERVLET)
	@ConditionalOnMode(Mode.SERVLET_ASYNC)
	static final class Async extends WorkController implements DisposableBean {

		/** How long past its latency a request may still wait for its downstream before MVC answers 503. */
		private static final Duration GRACE = Duration.ofSeconds(30);

		private final ScheduledThreadPoolExecutor timer;

		private final WebClient client;

		Async(DemoProperties properties, MeterRegistry registry, ObjectProvider<WebClient> downstreamClient) {
			super(properties, registry);
			// One thread: it only hands each answer to Tomcat, which writes it on a thread of its pool.
			this.timer = new ScheduledThreadPoolExecutor(1, Thread.ofPlatform().name("work-timer").daemon().factory());
			// A request whose client went away takes its task off the queue instead of holding it until due.
			this.timer.setRemoveOnCancelPolicy(true);
			// DownstreamClient's, whose pool the downstream health check shares.
			this.client = (properties.downstreamUrl() != null) ? downstreamClient.getObject() : null;
		}

		@GetMapping(path = WorkEndpoint.PATH, produces = MediaType.APPLICATION_JSON_VALUE)
		@WorkApiDoc
		DeferredResult<WorkResult> work(@RequestParam(required = false) String latencyMs,
				@RequestParam(required = false) String minMs, @RequestParam(required = false) String maxMs,
				@RequestParam(required = false) String mix) {
			Duration latency = latency(latencyMs, minMs, maxMs, mix);
			long started = System.nanoTime();
			int now = meters().begin();
			compute();
			// Spring MVC's async timeout is Tomcat's 30 s unless set: a request may ask for up to 60 s.
			DeferredResult<WorkResult> answer = new DeferredResult<>(latency.plus(GRACE).toMillis());
			Runnable cancel;
			if (this.client != null) {
				Disposable call = this.client.get()
					.uri(Waiter.downstreamUri(downstream(), latency))
					.retrieve()
					.toBodilessEntity()
					.subscribe((ok) -> answer.setResult(result(latency, started, now, Thread.currentThread().getName())),
							answer::setErrorResult);
				cancel = call::dispose;
			}
			else {
				ScheduledFuture<?> due = this.timer.schedule(
						() -> answer.setResult(result(latency, started, now, Thread.currentThread().getName())),
						latency.toNanos(), TimeUnit.NANOSECONDS);
				cancel = () -> due.cancel(false);
			}
			// Answered, timed out, or the client went away: nothing is left waiting for this request.
			answer.onCompletion(() -> {
				cancel.run();
				meters().end(started);
			});
			return answer;
		}

		@Override
		public void destroy() {
			this.timer.shutdownNow();
		}

	}

	/** The service's own errors as {@link ProblemHandler} answers them on WebFlux: 400, 429 and 502 problem+json. */
	@RestControllerAdvice(assignableTypes = WorkController.class)
	@ConditionalOnWebApplication(type = Type.SERVLET)
	static final class Problems {

		@ExceptionHandler({ BadParameterException.class, TooBusyException.class, IOException.class,
				RestClientException.class, WebClientException.class })
		ResponseEntity<ProblemDetail> problem(Exception ex, HttpServletRequest request) {
			ProblemDetail problem = ProblemHandler.problem(ex);
			problem.setInstance(URI.create(request.getRequestURI()));
			ResponseEntity.BodyBuilder response = ResponseEntity.status(problem.getStatus());
			if (ex instanceof TooBusyException) {
				// Shed: come back in a second.
				response.header(HttpHeaders.RETRY_AFTER, "1");
			}
			return response.contentType(MediaType.APPLICATION_PROBLEM_JSON).body(problem);
		}

	}

}
