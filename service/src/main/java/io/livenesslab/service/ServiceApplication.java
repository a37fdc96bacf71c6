package io.livenesslab.service;

import java.util.Map;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.context.annotation.Bean;

/**
 * The liveness-lab service: one application that waits in one of seven ways (see {@link Mode}), on Spring
 * WebFlux or on Spring MVC and Tomcat as the mode says ({@link ModeStack}), so that the same image shows
 * why blocking the threads that serve requests gets a pod killed by its liveness probe.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class ServiceApplication {

	public static void main(String[] args) {
		SpringApplication.run(ServiceApplication.class, args);
	}

	/** {@code /actuator/info} says which mode this pod runs and how it waits. */
	@Bean
	InfoContributor demoInfo(DemoProperties properties) {
		return (info) -> info.withDetail("demo", Map.of("mode", properties.mode().label(), "latencyMs",
				properties.latencyMs(), "downstream", String.valueOf(properties.downstreamUrl())));
	}

}
