package io.livenesslab.service;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.reactive.function.client.WebClient;

import io.livenesslab.service.WorkEndpoint.WorkResult;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code demo.cpu-ms} computes where each mode runs its call, without a server. A WebFlux mode computes
 * when its call is subscribed: blocking and reactive on the thread that subscribes (in the service, the
 * event loop), offloaded and virtual on their scheduler's thread while the subscriber goes on. A servlet
 * mode computes on the thread that calls its controller (Tomcat's), servlet-async before it hands the
 * request its {@code DeferredResult}.
 */
class CpuWorkTests {

	private static final Duration CPU = Duration.ofMillis(300);

	@Test
	void spinsForTheTimeGiven() {
		long started = System.nanoTime();
		CpuWork.spin(CPU);
		assertThat(since(started)).isGreaterThanOrEqualTo(CPU);
	}

	@ParameterizedTest
	@EnumSource(names = { "BLOCKING", "REACTIVE" })
	void blockingAndReactiveComputeOnTheThreadThatSubscribes(Mode mode) throws Exception {
		Mono<String> call = Waiter.create(properties(mode), null).await(Duration.ZERO, null);
		long started = System.nanoTime();
		CompletableFuture<String> answer = call.toFuture();
		assertThat(since(started)).as("subscribing computed").isGreaterThanOrEqualTo(CPU);
		assertThat(answer.get(5, TimeUnit.SECONDS)).isEqualTo(Thread.currentThread().getName());
	}

	@ParameterizedTest
	@CsvSource({ "OFFLOADED, boundedElastic-", "VIRTUAL, virtual-" })
	void offloadedAndVirtualComputeOnTheirSchedulersThread(Mode mode, String thread) throws Exception {
		Mono<String> call = Waiter.create(properties(mode), null).await(Duration.ZERO, null);
		long started = System.nanoTime();
		CompletableFuture<String> answer = call.toFuture();
		assertThat(since(started)).as("the subscriber went on").isLessThan(CPU);
		assertThat(answer.get(5, TimeUnit.SECONDS)).startsWith(thread);
		assertThat(since(started)).isGreaterThanOrEqualTo(CPU);
	}

	@Test
	void servletAndServletVirtualComputeOnTheThreadThatServesTheRequest() throws Exception {
		WorkController.Blocking controller = new WorkController.Blocking(properties(Mode.SERVLET),
				new SimpleMeterRegistry());
		long started = System.nanoTime();
		WorkResult answer = controller.work("0", null, null, null);
		assertThat(since(started)).isGreaterThanOrEqualTo(CPU);
		assertThat(answer.thread()).isEqualTo(Thread.currentThread().getName());
		assertThat(answer.waitedMs()).isGreaterThanOrEqualTo(CPU.toMillis());
	}

	@Test
	void servletAsyncComputesOnTheRequestThreadBeforeItsDeferredResult() {
		WorkController.Async controller = new WorkController.Async(properties(Mode.SERVLET_ASYNC),
				new SimpleMeterRegistry(), new StaticListableBeanFactory().getBeanProvider(WebClient.class));
		try {
			long started = System.nanoTime();
			DeferredResult<WorkResult> answer = controller.work("60000", null, null, null);
			assertThat(since(started)).isGreaterThanOrEqualTo(CPU);
			assertThat(answer.hasResult()).as("the wait, a timer's, still ahead").isFalse();
		}
		finally {
			controller.destroy();
		}
	}

	private static DemoProperties properties(Mode mode) {
		return new DemoProperties(mode.label(), 0, 60000, null, 1, Duration.ZERO, 0, CPU.toMillis(), Duration.ZERO,
				WarmUp.On.DEFAULT);
	}

	private static Duration since(long started) {
		return Duration.ofNanos(System.nanoTime() - started);
	}

}
