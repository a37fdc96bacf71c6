package io.livenesslab.service;

import java.io.File;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The service in a JVM of its own, for a downstream: services in one JVM share Reactor Netty's global
 * event loops, and closing one would take the other's down with it.
 */
final class ServiceProcess implements AutoCloseable {

	private final Process process;

	private final int port;

	private ServiceProcess(Process process, int port) {
		this.process = process;
		this.port = port;
	}

	static ServiceProcess start(Map<String, Object> properties) throws Exception {
		int port;
		try (ServerSocket socket = new ServerSocket(0)) {
			port = socket.getLocalPort();
		}
		List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-cp", System.getProperty("java.class.path"), ServiceApplication.class.getName(), "--server.port=" + port));
		properties.forEach((key, value) -> command.add("--" + key + "=" + value));
		File log = Files.createTempFile("service-process", ".log").toFile();
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log).start();
		ServiceProcess service = new ServiceProcess(process, port);
		long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
		while (System.nanoTime() < deadline && process.isAlive()) {
			try {
				if (RunningService.probe(service.uri("/readyz"), Duration.ofSeconds(1)).status() == 200) {
					return service;
				}
			}
			catch (java.io.IOException ex) {
				// not listening yet
			}
			Thread.sleep(250);
		}
		service.close();
		throw new IllegalStateException("the service process did not get ready; its log: " + Files.readString(log.toPath()));
	}

	URI uri(String pathAndQuery) {
		return URI.create("http://127.0.0.1:" + this.port + pathAndQuery);
	}

	@Override
	public void close() {
		this.process.destroy();
	}

}
