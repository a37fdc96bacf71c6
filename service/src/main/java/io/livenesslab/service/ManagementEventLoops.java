package io.livenesslab.service;

import reactor.netty.resources.LoopResources;

import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;

/**
 * {@code demo.management-own-event-loops=true} with {@code management.server.port}: the management
 * server runs on an event loop of its own. By default Reactor Netty's servers in one JVM share one set of
 * event loops (spring-framework#35238), so a main port whose loops block takes the management port's
 * probes down with it. Loaded in the management child context only
 * (META-INF/spring/...ManagementContextConfiguration.imports), so it touches nothing else.
 */
@ManagementContextConfiguration(value = ManagementContextType.CHILD, proxyBeanMethods = false)
@ConditionalOnBooleanProperty("demo.management-own-event-loops")
class ManagementEventLoops {

	/** One loop: the management server answers probes and scrapes, nothing slow. */
	@Bean(destroyMethod = "dispose")
	LoopResources managementLoopResources() {
		return LoopResources.create("management-http", 1, true);
	}

	/** Added last, so this runOn wins over the shared loops the factory's resource factory sets. */
	@Bean
	WebServerFactoryCustomizer<NettyReactiveWebServerFactory> managementOnItsOwnLoops(LoopResources managementLoopResources) {
		return (factory) -> factory.addServerCustomizers((server) -> server.runOn(managementLoopResources));
	}

}
