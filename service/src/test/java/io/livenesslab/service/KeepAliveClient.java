package io.livenesslab.service;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One HTTP/1.1 keep-alive connection that never retries, on a raw socket so nothing between the test and
 * the server reconnects or resends: a request, its full answer, a pause, the next request, until the
 * server closes the connection. How the connection ended is the result: closed by the server right after
 * an answer that said {@code Connection: close} (what a clean shutdown does), or closed or reset under a
 * request (the request is lost: a client that never retries has no answer for it).
 */
final class KeepAliveClient implements Callable<KeepAliveClient.Outcome> {

	enum Ending {

		/** The server said {@code Connection: close} in an answer, then closed (FIN, no reset). */
		CLOSED_AFTER_CONNECTION_CLOSE,

		/** The connection was closed or reset while a request had no answer yet: that request is lost. */
		LOST_UNDER_REQUEST,

		/** The server said {@code Connection: close}, then reset the connection instead of closing it. */
		RESET_AFTER_CONNECTION_CLOSE,

		/** The server said {@code Connection: close} but sent more, or nothing within the read timeout. */
		OPEN_AFTER_CONNECTION_CLOSE

	}

	/** How the connection ended, its answers, those that were not 200, and the error that ended it, if any. */
	record Outcome(Ending ending, int answers, int non200, String error) {
	}

	private final int port;

	private final String pathAndQuery;

	private final Duration pause;

	private final AtomicInteger answers = new AtomicInteger();

	KeepAliveClient(int port, String pathAndQuery, Duration pause) {
		this.port = port;
		this.pathAndQuery = pathAndQuery;
		this.pause = pause;
	}

	int answers() {
		return this.answers.get();
	}

	@Override
	public Outcome call() throws IOException, InterruptedException {
		byte[] request = request(this.port, this.pathAndQuery);
		int non200 = 0;
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout(30_000);
			InputStream in = new BufferedInputStream(socket.getInputStream());
			OutputStream out = socket.getOutputStream();
			while (true) {
				Answer answer;
				try {
					out.write(request);
					out.flush();
					answer = Answer.read(in);
				}
				catch (IOException ex) {
					return new Outcome(Ending.LOST_UNDER_REQUEST, answers(), non200, ex.toString());
				}
				this.answers.incrementAndGet();
				if (answer.status() != 200) {
					non200++;
				}
				if (answer.connectionClose()) {
					return new Outcome(afterConnectionClose(in), answers(), non200, null);
				}
				Thread.sleep(this.pause);
			}
		}
	}

	/** A bodyless HTTP/1.1 GET of {@code pathAndQuery} to 127.0.0.1:{@code port}, as bytes on the wire. */
	static byte[] request(int port, String pathAndQuery) {
		return ("GET " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n\r\n")
			.getBytes(StandardCharsets.US_ASCII);
	}

	private static Ending afterConnectionClose(InputStream in) {
		try {
			return (in.read() == -1) ? Ending.CLOSED_AFTER_CONNECTION_CLOSE : Ending.OPEN_AFTER_CONNECTION_CLOSE;
		}
		catch (SocketTimeoutException ex) {
			return Ending.OPEN_AFTER_CONNECTION_CLOSE;
		}
		catch (IOException ex) {
			return Ending.RESET_AFTER_CONNECTION_CLOSE;
		}
	}

	/**
	 * A status line, headers and a body, read in full or not at all (EOFException). The body has a
	 * Content-Length (Reactor Netty) or comes in chunks (Tomcat, for an answer Spring MVC flushed as it
	 * wrote it).
	 */
	record Answer(int status, boolean connectionClose) {

		static Answer read(InputStream in) throws IOException {
			String statusLine = line(in);
			int status = Integer.parseInt(statusLine.split(" ")[1]);
			long length = -1;
			boolean chunked = false;
			boolean close = false;
			for (String header = line(in); !header.isEmpty(); header = line(in)) {
				int colon = header.indexOf(':');
				String name = header.substring(0, colon).trim().toLowerCase(Locale.ROOT);
				String value = header.substring(colon + 1).trim();
				if (name.equals("content-length")) {
					length = Long.parseLong(value);
				}
				else if (name.equals("transfer-encoding") && value.equalsIgnoreCase("chunked")) {
					chunked = true;
				}
				else if (name.equals("connection") && value.equalsIgnoreCase("close")) {
					close = true;
				}
			}
			if (chunked) {
				// Chunks (a hex size line, the bytes, CRLF) until one of size 0, then trailers until a blank line.
				for (long size = chunkSize(line(in)); size > 0; size = chunkSize(line(in))) {
					skip(in, size);
					line(in);
				}
				for (String trailer = line(in); !trailer.isEmpty(); trailer = line(in)) {
					// trailers say nothing the test needs
				}
				return new Answer(status, close);
			}
			if (length < 0) {
				throw new IllegalStateException("an answer without Content-Length or chunks: " + statusLine);
			}
			skip(in, length);
			return new Answer(status, close);
		}

		private static long chunkSize(String line) {
			int extension = line.indexOf(';');
			return Long.parseLong((extension < 0) ? line.trim() : line.substring(0, extension).trim(), 16);
		}

		private static void skip(InputStream in, long length) throws IOException {
			for (long i = 0; i < length; i++) {
				if (in.read() == -1) {
					throw new EOFException("the connection closed after " + i + " of " + length + " body bytes");
				}
			}
		}

		private static String line(InputStream in) throws IOException {
			ByteArrayOutputStream bytes = new ByteArrayOutputStream();
			for (int b = in.read(); b != '\n'; b = in.read()) {
				if (b == -1) {
					throw new EOFException("the connection closed before a full answer");
				}
				if (b != '\r') {
					bytes.write(b);
				}
			}
			return bytes.toString(StandardCharsets.US_ASCII);
		}

	}

}
