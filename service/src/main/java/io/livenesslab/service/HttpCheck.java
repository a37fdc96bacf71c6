package io.livenesslab.service;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The HTTP check of the chart's {@code helm test} pods: GETs each URL in turn and fails on the first
 * answer that is not 2xx, like {@code curl --fail --fail-early --retry 5 --retry-delay 2
 * --retry-connrefused --max-time 5}. It exists because the official JRE images ship no curl from Java 22
 * on, and the service image must not grow one for its tests: this runs on what the image has, a JRE
 * and our classes, without Spring (it uses the JDK's HttpClient only, so the application classes alone
 * are its class path):
 *
 * <pre>
 * java -cp /app/BOOT-INF/classes io.livenesslab.service.HttpCheck URL...
 * </pre>
 *
 * Prints one line per URL ({@code http://x/readyz -> HTTP 200 in 0.012s}); exits 0 when every URL
 * answered 2xx, 1 at the first that did not, 2 on bad arguments.
 */
final class HttpCheck {

	static final String USAGE = "usage: java -cp /app/BOOT-INF/classes " + HttpCheck.class.getName()
			+ " URL...  (GETs each http(s) URL in turn; exit 0: all 2xx, 1: one failed, 2: bad arguments)";

	private final int retries;

	private final Duration retryDelay;

	private final Duration timeout;

	/**
	 * @param retries extra attempts per URL after a connection failure, a timeout or a transient status
	 * @param retryDelay wait before each retry
	 * @param timeout the most one attempt may take, connecting and reading the whole answer included
	 */
	HttpCheck(int retries, Duration retryDelay, Duration timeout) {
		this.retries = retries;
		this.retryDelay = retryDelay;
		this.timeout = timeout;
	}

	/** The curl call it replaces: 5 retries 2 s apart, 5 s per attempt (enough for a pod just turned Ready). */
	public static void main(String[] args) {
		int exitCode = new HttpCheck(5, Duration.ofSeconds(2), Duration.ofSeconds(5)).run(args, System.out, System.err);
		System.exit(exitCode);
	}

	/** Checks every URL in {@code args}, reporting to {@code out} and {@code err}; returns the exit code. */
	int run(String[] args, PrintStream out, PrintStream err) {
		List<URI> urls = parse(args, err);
		if (urls == null) {
			return 2;
		}
		// HTTP/1.1: what kubelet's probes and curl speak; no h2c upgrade dance for a one-shot GET.
		HttpClient client = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(this.timeout)
			.build();
		try {
			for (URI url : urls) {
				if (!check(client, url, out, err)) {
					return 1;
				}
			}
			return 0;
		}
		finally {
			// Not close(): it would wait for an exchange that timed out; nothing is left worth waiting for.
			client.shutdownNow();
		}
	}

	/** The URLs, or null (and the usage on {@code err}) when an argument is not an absolute http(s) URL. */
	private static List<URI> parse(String[] args, PrintStream err) {
		if (args.length == 0) {
			err.println(USAGE);
			return null;
		}
		List<URI> urls = new ArrayList<>();
		for (String arg : args) {
			try {
				URI url = new URI(arg);
				String scheme = (url.getScheme() != null) ? url.getScheme().toLowerCase(Locale.ROOT) : "";
				if (!(scheme.equals("http") || scheme.equals("https")) || url.getHost() == null) {
					throw new URISyntaxException(arg, "not an absolute http or https URL");
				}
				urls.add(url);
			}
			catch (URISyntaxException ex) {
				err.println("bad URL '" + arg + "': " + ex.getReason());
				err.println(USAGE);
				return null;
			}
		}
		return urls;
	}

	/** One URL, with its retries: true when it answered 2xx. */
	private boolean check(HttpClient client, URI url, PrintStream out, PrintStream err) {
		HttpRequest request = HttpRequest.newBuilder(url).timeout(this.timeout).GET().build();
		for (int attempt = 0;; attempt++) {
			long start = System.nanoTime();
			String outcome;
			boolean transientFailure;
			HttpResponse<String> response = null;
			try {
				response = send(client, request);
				outcome = "HTTP " + response.statusCode();
				transientFailure = isTransient(response.statusCode());
			}
			catch (IOException | TimeoutException ex) {
				// Nothing listening yet, a reset, or no answer in time: what --retry-connrefused retries.
				outcome = "failed (" + describe(ex) + ")";
				transientFailure = true;
			}
			String seconds = String.format(Locale.ROOT, "%.3fs", (System.nanoTime() - start) / 1e9);
			boolean ok = response != null && response.statusCode() / 100 == 2;
			int retriesLeft = this.retries - attempt;
			if (!ok && transientFailure && retriesLeft > 0) {
				err.printf(Locale.ROOT, "%s -> %s in %s; retrying in %.1fs, %d %s left%n", url, outcome, seconds,
						this.retryDelay.toMillis() / 1e3, retriesLeft, (retriesLeft == 1) ? "retry" : "retries");
				if (!sleep(this.retryDelay)) {
					err.println(url + " -> interrupted");
					return false;
				}
				continue;
			}
			out.println(url + " -> " + outcome + " in " + seconds);
			if (!ok && response != null && !response.body().isBlank()) {
				// The problem+json detail says why, e.g. a 400 naming the parameter.
				err.println(abbreviate(response.body().strip(), 500));
			}
			return ok;
		}
	}

	/**
	 * One attempt, bounded as a whole: the request timeout alone stops at the response headers, a
	 * body that trickles in must not hold the test past its limit either.
	 */
	private HttpResponse<String> send(HttpClient client, HttpRequest request) throws IOException, TimeoutException {
		CompletableFuture<HttpResponse<String>> future = client.sendAsync(request, BodyHandlers.ofString());
		try {
			return future.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			future.cancel(true);
			throw new TimeoutException("no answer within " + this.timeout.toMillis() + " ms");
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof IOException io) {
				throw io;
			}
			throw new IOException(ex.getCause());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			future.cancel(true);
			throw new IOException("interrupted", ex);
		}
	}

	/** What curl --retry retries: 408, 429 and 5xx, e.g. the 503 of a pod that is not Ready yet. */
	private static boolean isTransient(int status) {
		return status == 408 || status == 429 || status >= 500;
	}

	private static String describe(Exception ex) {
		// HttpClient's ConnectException often has no message: the class name says "connection refused".
		String message = ex.getMessage();
		return ex.getClass().getSimpleName() + ((message == null || message.isBlank()) ? "" : ": " + message);
	}

	private static String abbreviate(String text, int max) {
		return (text.length() <= max) ? text : text.substring(0, max) + "...";
	}

	private static boolean sleep(Duration delay) {
		try {
			Thread.sleep(delay);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

}
