package io.livenesslab.service;

import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.http.codec.CodecCustomizer;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.HttpHandlerDecoratorFactory;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.reactive.function.server.HandlerStrategies;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.WebExceptionHandler;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.adapter.HttpWebHandlerAdapter;
import org.springframework.web.server.i18n.LocaleContextResolver;

/**
 * {@code GET /api/work} straight to {@link WorkEndpoint}'s route instead of through the dispatcher. Spring
 * Boot serves every request with one chain: its filters and error handlers around the
 * {@code DispatcherHandler}, which asks each handler mapping in turn (the actuator's, whose conditions
 * parse the {@code Accept} header, come first), adapts the handler it finds and handles its result, all
 * under Boot's observation registry. This gives {@code GET /api/work} a chain of its own, what
 * {@code RouterFunctions.toHttpHandler} builds: the same filters ({@link ConnectionDrain}), error handlers,
 * codecs and locale resolver as Boot's, with the route as the handler. Everything else (the probes, the
 * actuator, the API docs, a 404) goes through Boot's chain as before. What it saves is measured in
 * docs/benchmark.md ("The work route past the dispatcher").
 * <p>
 * Only while the {@code http.server.requests} observation is off (application.yaml): switched on, every
 * request goes through Boot's chain, so {@code /api/work} is observed.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty(name = "management.observations.enable.http.server.requests", havingValue = false)
class WorkShortcut {

	@Bean
	HttpHandlerDecoratorFactory workPastTheDispatcher(ApplicationContext context, RouterFunction<ServerResponse> workRoute,
			ObjectProvider<WebFilter> filters, ObjectProvider<WebExceptionHandler> errorHandlers,
			ObjectProvider<CodecCustomizer> codecs, LocaleContextResolver localeContextResolver) {
		HandlerStrategies.Builder strategies = HandlerStrategies.empty()
			.codecs((configurer) -> {
				configurer.registerDefaults(true);
				codecs.orderedStream().forEach((codec) -> codec.customize(configurer));
			})
			.localeContextResolver(localeContextResolver);
		filters.orderedStream().forEach(strategies::webFilter);
		errorHandlers.orderedStream().forEach(strategies::exceptionHandler);
		HttpHandler work = RouterFunctions.toHttpHandler(workRoute, strategies.build());
		// Only this context's own chain: the management server's child context (management.server.port)
		// finds this factory too, and keeps its chain as Boot builds it.
		return (boot) -> (boot instanceof HttpWebHandlerAdapter adapter && adapter.getApplicationContext() == context)
				? new Shortcut(work, boot) : boot;
	}

	/** {@code GET /api/work} to WORK, everything else to BOOT. */
	record Shortcut(HttpHandler work, HttpHandler boot) implements HttpHandler {

		@Override
		public Mono<Void> handle(ServerHttpRequest request, ServerHttpResponse response) {
			boolean work = request.getMethod() == HttpMethod.GET
					&& WorkEndpoint.PATH.equals(request.getPath().pathWithinApplication().value());
			return (work ? this.work : this.boot).handle(request, response);
		}

	}

}
